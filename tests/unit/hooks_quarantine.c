/* The hook layer's quarantine, alone: a lookup gives a block its own free
 * stack while other threads evict and refill the slots, and finds every
 * entry of a full quarantine. */
#define _GNU_SOURCE
#include "hooks/quarantine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* ---- the per-thread batches in front of the ring ---- */

static size_t evicted_count;

static void evict_counting(const struct quarantined *blocks, size_t count, void *context)
{
    (void)blocks;
    (void)context;
    evicted_count += count;
}

static size_t ring_blocks(void)
{
    struct quarantine_stats stats;
    quarantine_stats(&stats);
    return stats.blocks;
}

/* A batched block is found at once, before its batch reaches the ring,
 * and after; the ring gets the batch when it is full. */
Test(quarantine, a_batched_block_is_found_before_and_after_its_batch_moves, .timeout = 60)
{
    cr_assert_eq(quarantine_init((size_t)1 << 20), 0);
    for (uintptr_t i = 0; i < QUARANTINE_BATCH_BLOCKS - 1; i++) {
        uintptr_t user = 0x20000000 + 16 * i;
        struct quarantined block = { user, 16, stack_of(user) }, entry;
        quarantine_push_batched(&block, evict_counting, NULL);
        cr_assert(quarantine_find(user, &entry), "batched entry %zu", (size_t)i);
        cr_assert_eq(entry.free_stack, stack_of(user));
    }
    cr_assert_eq(ring_blocks(), 0, "the batch is not full yet");
    uintptr_t last = 0x20000000 + 16 * (QUARANTINE_BATCH_BLOCKS - 1);
    struct quarantined block = { last, 16, stack_of(last) }, entry;
    quarantine_push_batched(&block, evict_counting, NULL);
    cr_assert_eq(ring_blocks(), QUARANTINE_BATCH_BLOCKS, "a full batch goes to the ring");
    for (uintptr_t i = 0; i < QUARANTINE_BATCH_BLOCKS; i++) {
        uintptr_t user = 0x20000000 + 16 * i;
        cr_assert(quarantine_find(user, &entry), "entry %zu in the ring", (size_t)i);
        cr_assert_eq(entry.free_stack, stack_of(user));
    }
    cr_assert_eq(evicted_count, 0);
}

#define FEW 3

static void *push_few_batched(void *base_pointer)
{
    uintptr_t base = (uintptr_t)base_pointer;
    for (uintptr_t i = 0; i < FEW; i++) {
        struct quarantined block = { base + 16 * i, 16, stack_of(base + 16 * i) };
        quarantine_push_batched(&block, evict_counting, NULL);
    }
    return NULL;
}

Test(quarantine, a_threads_batch_goes_to_the_ring_when_it_exits, .timeout = 60)
{
    cr_assert_eq(quarantine_init((size_t)1 << 20), 0);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, push_few_batched, (void *)(uintptr_t)0x30000000), 0);
    cr_assert_eq(pthread_join(thread, NULL), 0);
    cr_assert_eq(ring_blocks(), FEW);
    struct quarantined entry;
    for (uintptr_t i = 0; i < FEW; i++)
        cr_assert(quarantine_find(0x30000000 + 16 * i, &entry));
}

static pthread_barrier_t pushed, forked;

static void *push_few_then_wait(void *base_pointer)
{
    push_few_batched(base_pointer);
    pthread_barrier_wait(&pushed);
    pthread_barrier_wait(&forked);
    return NULL;
}

/* In the child the pushing thread is gone: its batch and the forking
 * thread's own go to the ring. */
Test(quarantine, a_fork_child_moves_every_batch_to_the_ring, .timeout = 60)
{
    cr_assert_eq(quarantine_init((size_t)1 << 20), 0);
    pthread_barrier_init(&pushed, NULL, 2);
    pthread_barrier_init(&forked, NULL, 2);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, push_few_then_wait, (void *)(uintptr_t)0x40000000), 0);
    pthread_barrier_wait(&pushed);
    push_few_batched((void *)(uintptr_t)0x50000000);
    cr_assert_eq(ring_blocks(), 0);
    quarantine_lock(); /* as heap_state.c's fork handlers do */
    pid_t child = fork();
    quarantine_unlock();
    if (child == 0) {
        quarantine_after_fork_in_child();
        struct quarantined entry;
        int found = 0;
        for (uintptr_t i = 0; i < FEW; i++)
            found += quarantine_find(0x40000000 + 16 * i, &entry) +
                     quarantine_find(0x50000000 + 16 * i, &entry);
        _exit(ring_blocks() == 2 * FEW && found == 2 * FEW ? 0 : 1);
    }
    cr_assert_geq(child, 0);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    cr_assert_eq(ring_blocks(), 0, "the parent's batches stay where they are");
    pthread_barrier_wait(&forked);
    pthread_join(thread, NULL);
}

static size_t evicted_most, evicted_total;

static void evict_measuring(const struct quarantined *blocks, size_t count, void *context)
{
    (void)context;
    for (size_t i = 0; i < count; i++)
        cr_assert_neq(blocks[i].user, 0);
    if (count > evicted_most)
        evicted_most = count;
    evicted_total += count;
}

/* A ring full by count (blocks of size 0) when a batch comes whose second
 * block puts it far over the bound in bytes: the flush evicts hundreds of
 * blocks, never more than QUARANTINE_EVICT_MAX at once (the evict
 * function's array), and loses none. */
Test(quarantine, a_flush_far_over_the_bound_evicts_in_bounded_batches, .timeout = 60)
{
    size_t bound = (size_t)1 << 20, entries = bound / 16 + 1, pushed = 0;
    cr_assert_eq(quarantine_init(bound), 0);
    /* Just under the bound in bytes, then zero-size blocks up to one
     * entry short of full. */
    for (uintptr_t i = 0; i < bound / 16 - 1; i++, pushed++) {
        struct quarantined block = { 0x60000000 + 16 * i, 16, 1 };
        quarantine_push(&block, evict_measuring, NULL);
    }
    for (uintptr_t i = 0; pushed < entries - 1; i++, pushed++) {
        struct quarantined block = { 0x70000000 + 16 * i, 0, 1 };
        quarantine_push(&block, evict_measuring, NULL);
    }
    cr_assert_eq(evicted_total, 0);
    /* The batch: an empty block (the ring is then full by count), a big
     * one (an eviction first; then far over the bound), empty ones until
     * the batch is full. */
    for (uintptr_t i = 0; i < QUARANTINE_BATCH_BLOCKS; i++, pushed++) {
        struct quarantined block = { 0x80000000 + 16 * i, i == 1 ? bound / 64 - 16 : 0, 1 };
        quarantine_push_batched(&block, evict_measuring, NULL);
    }
    cr_assert_gt(evicted_total, QUARANTINE_EVICT_MAX, "%zu evicted", evicted_total);
    cr_assert_leq(evicted_most, QUARANTINE_EVICT_MAX);
    struct quarantine_stats stats;
    quarantine_stats(&stats);
    cr_assert_leq(stats.bytes, bound);
    cr_assert_eq(stats.blocks + evicted_total, pushed, "%zu in the ring, %zu evicted, %zu pushed",
                 stats.blocks, evicted_total, pushed);
}

/* Whether a free's stack is worth capturing: only if the push keeps the
 * block. Without a quarantine (the profiler's quarantine=0) nothing is
 * kept, and a block over the bound goes straight through. */
Test(quarantine, would_hold_only_what_a_push_keeps, .timeout = 60)
{
    cr_assert_not(quarantine_would_hold(16), "no quarantine yet");
    cr_assert_eq(quarantine_init(0), 0);
    cr_assert_not(quarantine_would_hold(16), "quarantine=0 holds nothing");
}

Test(quarantine, would_hold_within_the_bound, .timeout = 60)
{
    cr_assert_eq(quarantine_init(4096), 0);
    cr_assert(quarantine_would_hold(16));
    cr_assert(quarantine_would_hold(4096));
    cr_assert_not(quarantine_would_hold(4097), "a block over the bound goes straight to eviction");
    /* What quarantine_push does with the same block agrees. */
    struct quarantined big = { 0x100000, 4097, 7 }, found;
    quarantine_push(&big, evict_nothing, NULL);
    cr_assert_not(quarantine_find(big.user, &found));
    struct quarantined small = { 0x200000, 64, 9 };
    quarantine_push(&small, evict_nothing, NULL);
    cr_assert(quarantine_find(small.user, &found));
}
