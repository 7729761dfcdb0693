/* frame_table.h: every distinct frame of an input, stored once, named by
 * a 32-bit id. */
#ifndef EXECINFO_EX_LEAKS_FRAME_TABLE_H
#define EXECINFO_EX_LEAKS_FRAME_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "id_index.h"
#include "string_arena.h"

struct stored_frame {
    struct frame frame;       /* strings in the arena */
    const char *key;          /* the input's text for the frame */
    size_t key_length;
};

struct frame_table {
    struct stored_frame *frames;
    size_t count, capacity;
    struct id_index index;
    struct string_arena strings;
};

int frame_table_init(struct frame_table *table);
void frame_table_free(struct frame_table *table);

/* The id of the frame KEY names (any text that names one frame uniquely
 * in the input, e.g. the trace's own "MODULE:[0xREL]"), adding FRAME
 * (parsed from KEY) when it is new. Returns 0 or -ENOMEM. Normal world. */
int frame_table_intern(struct frame_table *table, const char *key, size_t key_length,
                       const struct frame *frame, uint32_t *id);

static inline const struct stored_frame *frame_table_get(const struct frame_table *table,
                                                         uint32_t id)
{
    return &table->frames[id];
}

#endif
