/* live_blocks.c: a hand-written open-addressing hash table (linear
 * probing, Fibonacci hashing, backward-shift deletion so that a trace's
 * millions of frees leave no tombstones), since C has no well-kept hash
 * table library to take instead.
 * World: normal (an ordinary program). */
#include "live_blocks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_BLOCKS_FIRST_SHIFT (64 - 12)

static size_t home_of(const struct live_blocks *blocks, uint64_t pointer)
{
    return (size_t)((pointer * 0x9e3779b97f4a7c15ull) >> blocks->shift);
}

static int live_blocks_allocate(struct live_blocks *blocks, unsigned shift)
{
    size_t capacity = (size_t)1 << (64 - shift);
    blocks->slots = calloc(capacity, sizeof *blocks->slots);
    if (blocks->slots == NULL)
        return -ENOMEM;
    blocks->mask = capacity - 1;
    blocks->shift = shift;
    blocks->count = 0;
    return 0;
}

int live_blocks_init(struct live_blocks *blocks)
{
    return live_blocks_allocate(blocks, LIVE_BLOCKS_FIRST_SHIFT);
}

void live_blocks_free(struct live_blocks *blocks)
{
    free(blocks->slots);
    memset(blocks, 0, sizeof *blocks);
}

/* The slot of POINTER, or the empty slot that ends its probe. */
static struct live_block *slot_for(const struct live_blocks *blocks, uint64_t pointer)
{
    for (size_t at = home_of(blocks, pointer);; at = (at + 1) & blocks->mask) {
        struct live_block *slot = &blocks->slots[at];
        if (slot->pointer == pointer || slot->pointer == 0)
            return slot;
    }
}

struct live_block *live_blocks_find(const struct live_blocks *blocks, uint64_t pointer)
{
    struct live_block *slot = slot_for(blocks, pointer);
    return slot->pointer != 0 ? slot : NULL;
}

static int live_blocks_grow(struct live_blocks *blocks)
{
    struct live_blocks bigger;

    if (blocks->shift <= 33 || live_blocks_allocate(&bigger, blocks->shift - 1) < 0)
        return -ENOMEM;
    for (size_t i = 0; i <= blocks->mask; i++)
        if (blocks->slots[i].pointer != 0)
            *slot_for(&bigger, blocks->slots[i].pointer) = blocks->slots[i];
    bigger.count = blocks->count;
    free(blocks->slots);
    *blocks = bigger;
    return 0;
}

int live_blocks_put(struct live_blocks *blocks, const struct live_block *block,
                    struct live_block *replaced)
{
    /* Grow first, at 50 %: short probes, and a free slot always remains. */
    if ((blocks->count + 1) * 2 > blocks->mask + 1 && live_blocks_grow(blocks) < 0)
        return -ENOMEM;
    struct live_block *slot = slot_for(blocks, block->pointer);
    int existed = slot->pointer != 0;
    if (existed && replaced != NULL)
        *replaced = *slot;
    *slot = *block;
    blocks->count += !existed;
    return existed;
}

/* Whether the entry at FILLED (home HOME) may move back into the hole at
 * HOLE: only if its home is not in the cyclic range (HOLE, FILLED]. */
static int may_fill_hole(size_t hole, size_t filled, size_t home)
{
    if (hole <= filled)
        return home <= hole || home > filled;
    return home <= hole && home > filled;
}

int live_blocks_remove(struct live_blocks *blocks, uint64_t pointer, struct live_block *removed)
{
    struct live_block *slot = slot_for(blocks, pointer);
    if (slot->pointer == 0)
        return 0;
    if (removed != NULL)
        *removed = *slot;
    size_t hole = (size_t)(slot - blocks->slots);
    for (size_t at = (hole + 1) & blocks->mask; blocks->slots[at].pointer != 0;
         at = (at + 1) & blocks->mask) {
        if (may_fill_hole(hole, at, home_of(blocks, blocks->slots[at].pointer))) {
            blocks->slots[hole] = blocks->slots[at];
            hole = at;
        }
    }
    blocks->slots[hole].pointer = 0;
    blocks->count--;
    return 1;
}

const struct live_block *live_blocks_next(const struct live_blocks *blocks, size_t *cursor)
{
    while (*cursor <= blocks->mask) {
        const struct live_block *slot = &blocks->slots[(*cursor)++];
        if (slot->pointer != 0)
            return slot;
    }
    return NULL;
}
