/* live_blocks.h: the blocks allocated and not yet freed, by pointer. */
#ifndef EXECINFO_EX_LEAKS_LIVE_BLOCKS_H
#define EXECINFO_EX_LEAKS_LIVE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

struct live_block {
    uint64_t pointer;   /* 0: an empty slot (a null pointer is never a block) */
    uint64_t size;
    uint32_t stack;     /* id in the stack_table */
    uint32_t origin;    /* where the input said so (a trace's line), for messages */
};

struct live_blocks {
    struct live_block *slots;
    size_t mask, count;
    unsigned shift;     /* 64 - log2(slot count) */
};

int live_blocks_init(struct live_blocks *blocks);
void live_blocks_free(struct live_blocks *blocks);

/* The live block at POINTER, or NULL. */
struct live_block *live_blocks_find(const struct live_blocks *blocks, uint64_t pointer);

/* Add BLOCK (pointer != 0). If a block already lives at its pointer, it
 * is replaced and copied to *REPLACED, and 1 is returned; else 0, or
 * -ENOMEM. Normal world. */
int live_blocks_put(struct live_blocks *blocks, const struct live_block *block,
                    struct live_block *replaced);

/* Remove the block at POINTER into *REMOVED (may be NULL). Returns 1, or 0
 * if no block lives there. */
int live_blocks_remove(struct live_blocks *blocks, uint64_t pointer, struct live_block *removed);

/* Iterate: start with *CURSOR = 0; NULL at the end. */
const struct live_block *live_blocks_next(const struct live_blocks *blocks, size_t *cursor);

#endif
