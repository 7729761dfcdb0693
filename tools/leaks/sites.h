/* sites.h: the live blocks of a heap_snapshot grouped by allocation stack,
 * the stack with the most bytes first. */
#ifndef EXECINFO_EX_LEAKS_SITES_H
#define EXECINFO_EX_LEAKS_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "heap_snapshot.h"

struct site {
    uint32_t stack;      /* id in the stack_table */
    uint64_t bytes;      /* saturates at UINT64_MAX */
    uint64_t blocks;
};

struct sites {
    struct site *sites;  /* sorted: bytes, then blocks, descending; then the first seen stack */
    size_t count;
    uint64_t bytes, blocks;
};

/* Group HEAP's live blocks. Returns 0 or -ENOMEM. Normal world. */
int sites_group(const struct heap_snapshot *heap, struct sites *out);
void sites_free(struct sites *sites);

#endif
