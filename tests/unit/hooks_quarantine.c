/* The hook layer's quarantine, alone: a lookup gives a block its own free
 * stack while other threads evict and refill the slots, and finds every
 * entry of a full quarantine. */
#define _GNU_SOURCE
#include "hooks/quarantine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "support.h"

#define ADDRESSES 64

/* What each fake block's entry must say: derived from its address. */
static stack_id stack_of(uintptr_t user) { return (stack_id)(user * 2654435761u) | 1; }
static size_t size_of(uintptr_t user) { return 16 + (user >> 4) % 7 * 16; }

static void evict_nothing(const struct quarantined *blocks, size_t count, void *context)
{
    (void)blocks;
    (void)count;
    (void)context;
}

static atomic_int stop;

static void *push_forever(void *seed_pointer)
{
    unsigned seed = (unsigned)(uintptr_t)seed_pointer;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        seed = seed * 1103515245u + 12345u;
        uintptr_t user = 0x100000 + 16 * (uintptr_t)((seed >> 8) % ADDRESSES);
        struct quarantined block = { user, size_of(user), stack_of(user) };
        quarantine_push(&block, evict_nothing, NULL);
    }
    return NULL;
}

/* A small ring, refilled all the time by two threads: every entry found
 * must be the one of the address asked for. The run is bounded by a count
 * and by 3 s, whichever comes first; nothing is timed. */
Test(quarantine, a_lookup_never_pairs_a_block_with_another_blocks_stack, .timeout = 60)
{
    cr_assert_eq(quarantine_init(16 * 8), 0);
    pthread_t pushers[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&pushers[i], NULL, push_forever, (void *)(uintptr_t)(i + 1)), 0);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long found = 0, wrong = 0;
    unsigned seed = 7;
    for (long i = 0; i < 50 * 1000 * 1000; i++) {
        seed = seed * 1103515245u + 12345u;
        uintptr_t user = 0x100000 + 16 * (uintptr_t)((seed >> 8) % ADDRESSES);
        struct quarantined entry;
        if (quarantine_find(user, &entry)) {
            found++;
            if (entry.user != user || entry.free_stack != stack_of(user) ||
                entry.size != size_of(user))
                wrong++;
        }
        if (i % 100000 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec >= 3)
                break;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(pushers[i], NULL);
    cr_assert_gt(found, 0);
    cr_assert_eq(wrong, 0, "%ld of %ld lookups gave another block's entry", wrong, found);
}

/* The default bound, 4 MiB of 16-byte blocks: a quarter of a million
 * entries, every one found, and one that was evicted not. */
Test(quarantine, every_entry_of_a_full_quarantine_is_found, .timeout = 60)
{
    size_t bound = (size_t)4 << 20, entries = bound / 16;
    cr_assert_eq(quarantine_init(bound), 0);
    for (uintptr_t i = 0; i < entries + 10; i++) {
        uintptr_t user = 0x10000000 + 16 * i;
        struct quarantined block = { user, 16, stack_of(user) };
        quarantine_push(&block, evict_nothing, NULL);
    }
    struct quarantined entry;
    cr_assert(!quarantine_find(0x10000000, &entry), "the oldest was evicted");
    for (uintptr_t i = 10; i < entries + 10; i += 1) {
        uintptr_t user = 0x10000000 + 16 * i;
        cr_assert(quarantine_find(user, &entry), "entry %zu", (size_t)i);
        cr_assert_eq(entry.free_stack, stack_of(user));
    }
}
