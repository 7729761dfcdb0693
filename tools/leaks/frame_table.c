/* frame_table.c: frames interned by the text that names them.
 * World: normal (an ordinary program). */
#include "frame_table.h"
#include "hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array_grow.h"

int frame_table_init(struct frame_table *table)
{
    memset(table, 0, sizeof *table);
    return id_index_init(&table->index);
}

void frame_table_free(struct frame_table *table)
{
    free(table->frames);
    id_index_free(&table->index);
    string_arena_free(&table->strings);
    memset(table, 0, sizeof *table);
}

struct key_probe {
    const struct frame_table *table;
    const char *key;
    size_t length;
};

static int key_equal(const void *context, uint32_t id)
{
    const struct key_probe *probe = context;
    const struct stored_frame *stored = &probe->table->frames[id];
    return stored->key_length == probe->length && memcmp(stored->key, probe->key, probe->length) == 0;
}

static const char *copy_or_null(struct string_arena *arena, const char *text, size_t length,
                                int *failed)
{
    if (text == NULL)
        return NULL;
    const char *copy = string_arena_copy(arena, text, length);
    *failed |= copy == NULL;
    return copy;
}

static int frame_table_add(struct frame_table *table, const char *key, size_t key_length,
                           const struct frame *frame)
{
    int failed = 0;
    if (array_grow(&table->frames, &table->capacity, table->count, sizeof *table->frames, 256) < 0)
        return -ENOMEM;
    struct stored_frame *stored = &table->frames[table->count];
    stored->frame = *frame;
    stored->frame.module = copy_or_null(&table->strings, frame->module, frame->module_length,
                                        &failed);
    stored->frame.symbol = copy_or_null(&table->strings, frame->symbol, frame->symbol_length,
                                        &failed);
    stored->key = copy_or_null(&table->strings, key, key_length, &failed);
    stored->key_length = key_length;
    if (failed)
        return -ENOMEM;
    table->count++;
    return 0;
}

int frame_table_intern(struct frame_table *table, const char *key, size_t key_length,
                       const struct frame *frame, uint32_t *id)
{
    struct key_probe probe = { table, key, key_length };
    uint64_t hash = hash_bytes(key, key_length);
    struct id_slot *slot = id_index_probe(&table->index, hash, key_equal, &probe);

    if (slot->id_plus_one != 0) {
        *id = slot->id_plus_one - 1;
        return 0;
    }
    if (table->count >= UINT32_MAX - 1 || frame_table_add(table, key, key_length, frame) < 0)
        return -ENOMEM;
    *id = (uint32_t)(table->count - 1);
    return id_index_fill(&table->index, slot, hash, *id);
}
