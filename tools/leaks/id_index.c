/* id_index.c: hand-written open addressing (linear probing) over 32-bit
 * ids, since C has no well-kept hash table library to take instead.
 * Nothing is ever removed, so there are no tombstones.
 * World: normal (an ordinary program). */
#include "id_index.h"

#include <errno.h>
#include <stdlib.h>

#define ID_INDEX_FIRST_SLOTS 1024

int id_index_init(struct id_index *index)
{
    index->slots = calloc(ID_INDEX_FIRST_SLOTS, sizeof *index->slots);
    index->mask = ID_INDEX_FIRST_SLOTS - 1;
    index->count = 0;
    return index->slots ? 0 : -ENOMEM;
}

void id_index_free(struct id_index *index)
{
    free(index->slots);
    index->slots = NULL;
    index->mask = index->count = 0;
}

struct id_slot *id_index_probe(const struct id_index *index, uint64_t hash,
                               id_equal_fn *equal, const void *context)
{
    uint32_t short_hash = (uint32_t)hash;

    for (size_t at = short_hash & index->mask;; at = (at + 1) & index->mask) {
        struct id_slot *slot = &index->slots[at];
        if (slot->id_plus_one == 0)
            return slot;
        if (slot->hash == short_hash && equal(context, slot->id_plus_one - 1))
            return slot;
    }
}

static int id_index_grow(struct id_index *index)
{
    size_t capacity = (index->mask + 1) * 2;
    struct id_slot *slots = calloc(capacity, sizeof *slots);

    if (slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i <= index->mask; i++) {
        struct id_slot old = index->slots[i];
        if (old.id_plus_one == 0)
            continue;
        size_t at = old.hash & (capacity - 1);
        while (slots[at].id_plus_one != 0)
            at = (at + 1) & (capacity - 1);
        slots[at] = old;
    }
    free(index->slots);
    index->slots = slots;
    index->mask = capacity - 1;
    return 0;
}

int id_index_fill(struct id_index *index, struct id_slot *slot, uint64_t hash, uint32_t id)
{
    slot->id_plus_one = id + 1;
    slot->hash = (uint32_t)hash;
    index->count++;
    /* Grow at 70 %: a free slot always remains, so probes end. */
    if (index->count * 10 >= (index->mask + 1) * 7)
        return id_index_grow(index);
    return 0;
}
