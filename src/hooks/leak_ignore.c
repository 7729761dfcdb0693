/* leak_ignore.c: backtrace_heap_ignore, LSan's __lsan_ignore_object: a
 * live block the leak check must neither report nor count, nor what only
 * it reaches. A mark in the block's header (block.h's BLOCK_IGNORED), so
 * that it goes with the block: a free clears it, and a block handed out
 * again at the same address starts without it.
 * World: signal-safe (the block set, one atomic step on the header). */
#define _GNU_SOURCE
#include "block_set.h"
#include "heap.h"
#include "execinfo_ex.h"

#include <errno.h>

__attribute__((visibility("default")))
int backtrace_heap_ignore(const void *pointer)
{
    uintptr_t address = (uintptr_t)pointer;
    /* Not heap_ready(), which may initialise (normal world): a block to
     * ignore came from a malloc that initialised already. */
    if (__atomic_load_n((int *)&heap.phase, __ATOMIC_ACQUIRE) != HEAP_READY || !heap.recording) {
        errno = ENOSYS;
        return -1;
    }
    /* The block that holds it: an interior pointer names it too. */
    uintptr_t user = block_set_last_at_or_before(address);
    struct block_facts facts;
    if (user == 0 || !block_read(&heap.layout, user, &facts) || facts.state != BLOCK_LIVE ||
        (address - user >= facts.size && address != user) ||
        !block_set_ignored(&heap.layout, user)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
