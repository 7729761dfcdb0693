/* id_index.h: find the id of a key by its hash (open addressing), for
 * tables that keep the keys themselves in an array indexed by id. */
#ifndef EXECINFO_EX_LEAKS_ID_INDEX_H
#define EXECINFO_EX_LEAKS_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct id_slot {
    uint32_t id_plus_one;   /* 0: empty */
    uint32_t hash;
};

struct id_index {
    struct id_slot *slots;
    size_t mask, count;
};

/* Whether the key of ID is the one looked for (CONTEXT describes it). */
typedef int id_equal_fn(const void *context, uint32_t id);

int id_index_init(struct id_index *index);
void id_index_free(struct id_index *index);

/* The slot holding the id that EQUAL accepts among those with HASH, or
 * the empty slot where such an id goes. Normal world. */
struct id_slot *id_index_probe(const struct id_index *index, uint64_t hash,
                               id_equal_fn *equal, const void *context);

/* Fill SLOT (an empty one from id_index_probe, no change in between) with
 * ID. Returns 0 or -ENOMEM (the id is in, but the index could not grow). */
int id_index_fill(struct id_index *index, struct id_slot *slot, uint64_t hash, uint32_t id);

#endif
