/* sites.c: one pass over the live blocks into a per-stack sum, then a sort.
 * World: normal (an ordinary program). */
#include "sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static int site_order(const void *left, const void *right)
{
    const struct site *a = left, *b = right;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->blocks != b->blocks)
        return a->blocks > b->blocks ? -1 : 1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* Keep the stacks that hold blocks, in place. */
static size_t sites_compact(struct site *sites, size_t count)
{
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (sites[i].blocks > 0)
            sites[kept++] = sites[i];
    return kept;
}

int sites_group(const struct heap_snapshot *heap, struct sites *out)
{
    size_t stack_count = heap->stacks.count;
    const struct live_block *block;
    size_t cursor = 0;

    memset(out, 0, sizeof *out);
    out->sites = calloc(stack_count ? stack_count : 1, sizeof *out->sites);
    if (out->sites == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < stack_count; i++)
        out->sites[i].stack = (uint32_t)i;
    while ((block = live_blocks_next(&heap->blocks, &cursor)) != NULL) {
        struct site *site = &out->sites[block->stack];
        site->bytes = add_saturated(site->bytes, block->size);
        site->blocks++;
        out->bytes = add_saturated(out->bytes, block->size);
        out->blocks++;
    }
    out->count = sites_compact(out->sites, stack_count);
    if (out->count > 1)
        qsort(out->sites, out->count, sizeof *out->sites, site_order);
    return 0;
}

void sites_free(struct sites *sites)
{
    free(sites->sites);
    memset(sites, 0, sizeof *sites);
}
