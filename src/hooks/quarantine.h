/* quarantine.h: recently freed blocks, held back from the C library so that
 * their memory is not reused at once: a use after free then lands in a
 * block that still knows who allocated and who freed it. A FIFO bounded by
 * bytes (the quarantine option). */
#ifndef EXECINFO_EX_QUARANTINE_H
#define EXECINFO_EX_QUARANTINE_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

struct quarantined {
    uintptr_t user;
    size_t size;
    stack_id free_stack;
};

typedef void quarantine_evict(const struct quarantined *block, void *context);

/* Map the ring for at most MAX_BYTES of blocks. Returns 0 or -errno.
 * World: normal, once, before any push. */
int quarantine_init(size_t max_bytes);

/* Hold BLOCK back; blocks pushed out to stay within the bound (or BLOCK
 * itself when it alone is larger, or when there is no quarantine) go to
 * EVICT, called without the lock held. World: normal (a mutex). */
void quarantine_push(const struct quarantined *block, quarantine_evict *evict, void *context);

/* The entry for USER if it is in the quarantine now (copied to *OUT):
 * its size and free stack are those of USER's own entry, never of a block
 * that took the slot meanwhile. One hash chain is followed, not the ring.
 * World: signal-safe (no lock; an entry evicted meanwhile may be missed). */
int quarantine_find(uintptr_t user, struct quarantined *out);

struct quarantine_stats {
    size_t blocks, bytes, max_bytes;
};
void quarantine_stats(struct quarantine_stats *out);

/* fork: hold the lock across it. */
void quarantine_lock(void);
void quarantine_unlock(void);

#endif
