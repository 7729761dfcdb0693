/* heap_snapshot.h: what an input leaves once read: the blocks still live,
 * the stacks that allocated them and their frames, and what reading found.
 * A trace (trace_replay.h) fills it; another input kind (a state blob)
 * can fill the same tables, and the report reads only these. */
#ifndef EXECINFO_EX_LEAKS_HEAP_SNAPSHOT_H
#define EXECINFO_EX_LEAKS_HEAP_SNAPSHOT_H

#include <stdint.h>

#include "frame_table.h"
#include "live_blocks.h"
#include "stack_table.h"

struct input_counts {
    uint64_t events;                /* allocations, frees, realloc halves, failed reallocs */
    uint64_t malformed;             /* lines skipped */
    uint64_t frees_never_allocated; /* free or realloc of a pointer not live */
    uint64_t duplicate_allocations; /* a pointer allocated again while live */
};

struct heap_snapshot {
    struct frame_table frames;
    struct stack_table stacks;
    struct live_blocks blocks;
    struct input_counts counts;
};

/* Returns 0 or -ENOMEM (then nothing needs freeing). Normal world. */
int heap_snapshot_init(struct heap_snapshot *heap);
void heap_snapshot_free(struct heap_snapshot *heap);

#endif
