/* stack_table.c: stacks interned by their frame ids.
 * World: normal (an ordinary program). */
#include "stack_table.h"
#include "hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array_grow.h"

int stack_table_init(struct stack_table *table)
{
    memset(table, 0, sizeof *table);
    return id_index_init(&table->index);
}

void stack_table_free(struct stack_table *table)
{
    free(table->stacks);
    free(table->frame_ids);
    id_index_free(&table->index);
    memset(table, 0, sizeof *table);
}

struct stack_probe {
    const struct stack_table *table;
    const uint32_t *frame_ids;
    uint32_t depth;
};

static int stack_equal(const void *context, uint32_t id)
{
    const struct stack_probe *probe = context;
    const struct stack_entry *entry = &probe->table->stacks[id];
    if (entry->depth != probe->depth)
        return 0;
    return probe->depth == 0 || memcmp(probe->table->frame_ids + entry->first, probe->frame_ids,
                                       probe->depth * sizeof *probe->frame_ids) == 0;
}

static int stack_table_reserve_frames(struct stack_table *table, uint32_t depth)
{
    while (table->frame_capacity - table->frame_count < depth) {
        size_t grown = table->frame_capacity ? table->frame_capacity * 2 : 4096;
        if (grown < table->frame_capacity || grown > SIZE_MAX / sizeof *table->frame_ids)
            return -ENOMEM;
        uint32_t *bigger = realloc(table->frame_ids, grown * sizeof *bigger);
        if (bigger == NULL)
            return -ENOMEM;
        table->frame_ids = bigger;
        table->frame_capacity = grown;
    }
    return 0;
}

static int stack_table_add(struct stack_table *table, const uint32_t *frame_ids, uint32_t depth)
{
    if (table->count >= UINT32_MAX - 1 ||
        array_grow(&table->stacks, &table->capacity, table->count, sizeof *table->stacks, 256) < 0 ||
        stack_table_reserve_frames(table, depth) < 0)
        return -ENOMEM;
    if (depth > 0)
        memcpy(table->frame_ids + table->frame_count, frame_ids, depth * sizeof *frame_ids);
    table->stacks[table->count] = (struct stack_entry){ table->frame_count, depth, 0, 0 };
    table->frame_count += depth;
    table->count++;
    return 0;
}

int stack_table_intern(struct stack_table *table, const uint32_t *frame_ids, uint32_t depth,
                       uint32_t *id)
{
    struct stack_probe probe = { table, frame_ids, depth };
    uint64_t hash = hash_mix(hash_bytes(frame_ids, depth * sizeof *frame_ids));
    struct id_slot *slot = id_index_probe(&table->index, hash, stack_equal, &probe);

    if (slot->id_plus_one != 0) {
        *id = slot->id_plus_one - 1;
        return 0;
    }
    if (stack_table_add(table, frame_ids, depth) < 0)
        return -ENOMEM;
    *id = (uint32_t)(table->count - 1);
    return id_index_fill(&table->index, slot, hash, *id);
}
