/* stack_table.h: every distinct allocation stack (a sequence of frame ids,
 * innermost first), stored once, named by a 32-bit id. */
#ifndef EXECINFO_EX_LEAKS_STACK_TABLE_H
#define EXECINFO_EX_LEAKS_STACK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "id_index.h"

struct stack_entry {
    size_t first;      /* in stack_table.frame_ids */
    uint32_t depth;
    /* Every allocation a trace made from this stack, freed or not (a
     * profile's alloc_objects and alloc_space); 0 for a state blob,
     * which knows only the live blocks. */
    uint64_t alloc_objects, alloc_bytes;
};

struct stack_table {
    struct stack_entry *stacks;
    size_t count, capacity;
    uint32_t *frame_ids;
    size_t frame_count, frame_capacity;
    struct id_index index;
};

int stack_table_init(struct stack_table *table);
void stack_table_free(struct stack_table *table);

/* The id of the stack FRAME_IDS[0..DEPTH), added if new (DEPTH 0: the
 * caller is unknown; FRAME_IDS must still be a valid pointer).
 * Returns 0 or -ENOMEM. Normal world. */
int stack_table_intern(struct stack_table *table, const uint32_t *frame_ids, uint32_t depth,
                       uint32_t *id);

/* The frames of stack ID; *DEPTH gets their count. */
static inline const uint32_t *stack_table_frames(const struct stack_table *table, uint32_t id,
                                                 uint32_t *depth)
{
    *depth = table->stacks[id].depth;
    /* No frame stored yet (every stack unknown): NULL, never NULL + 0. */
    return *depth ? table->frame_ids + table->stacks[id].first : NULL;
}

#endif
