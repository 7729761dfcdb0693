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

/* The most blocks one call of an evict function gets. */
#define QUARANTINE_EVICT_MAX 32

/* Blocks out of the quarantine, COUNT of them (1 to QUARANTINE_EVICT_MAX),
 * oldest first: handed to the evict function together, so that it can
 * wait for the lock-free walks once for all of them. */
typedef void quarantine_evict(const struct quarantined *blocks, size_t count, void *context);

/* Map the ring for at most MAX_BYTES of blocks. Returns 0 or -errno.
 * World: normal, once, before any push. */
int quarantine_init(size_t max_bytes);

/* Hold BLOCK back; blocks pushed out to stay within the bound (or BLOCK
 * itself when it alone is larger, or when there is no quarantine) go to
 * EVICT, called without the lock held. World: normal (a mutex). */
void quarantine_push(const struct quarantined *block, quarantine_evict *evict, void *context);

/* Whether a push of a block of SIZE bytes would hold it back at all: with
 * no quarantine (the profiler's quarantine=0) or a block larger than the
 * bound, it goes straight to the evict function, and its free stack would
 * be captured for nothing. World: signal-safe (two loads). */
int quarantine_would_hold(size_t size);

/* As quarantine_push, through the calling thread's batch: the block waits
 * there, findable by quarantine_find, until the batch holds
 * QUARANTINE_BATCH_BLOCKS blocks or a 64th of the bound in bytes, then
 * the batch goes into the ring under one lock. A batch is flushed when
 * its thread exits, and every batch in a fork child (their threads are
 * not there). Called from a signal handler inside another push, or when
 * the thread has no batch (more than QUARANTINE_BATCHES threads at once),
 * it is quarantine_push. EVICT must be the same at every call (the flush
 * at thread exit uses the last one). World: normal. */
#define QUARANTINE_BATCH_BLOCKS 16
#define QUARANTINE_BATCHES 256
void quarantine_push_batched(const struct quarantined *block, quarantine_evict *evict,
                             void *context);

/* In a fork child, with the lock free again: every thread's batch into
 * the ring (those of the threads that are gone are given up). */
void quarantine_after_fork_in_child(void);

/* The entry for USER if it is in the quarantine now (copied to *OUT):
 * its size and free stack are those of USER's own entry, never of a block
 * that took the slot meanwhile. One hash chain is followed, not the ring;
 * then the threads' batches (at most QUARANTINE_BATCHES x
 * QUARANTINE_BATCH_BLOCKS entries), then the chain again, for a block
 * that moved from its batch to the ring meanwhile.
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
