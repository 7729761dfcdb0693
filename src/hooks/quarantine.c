/* quarantine.c: a ring of freed blocks under one mutex.
 * World: push normal (mutex); find signal-safe (lock-free reads).
 *
 * Hand-written because it runs inside free(): no malloc. The ring lives in
 * its own mapping (MAP_NORESERVE, committed as it fills), sized for the
 * byte bound filled with the smallest blocks. Evicted blocks are handed
 * back after the lock is dropped, in batches, so that the C library's free
 * never runs under our lock. */
#include "quarantine.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define EVICT_BATCH 32
#define SMALLEST_BLOCK 16
#define MAX_ENTRIES ((size_t)1 << 24)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct quarantined *ring;
static size_t capacity, head, count;    /* head: the oldest entry */
static _Atomic size_t bytes;
static size_t max_bytes;

int quarantine_init(size_t bound)
{
    max_bytes = bound;
    if (bound == 0)
        return 0;
    capacity = bound / SMALLEST_BLOCK + 1;
    if (capacity > MAX_ENTRIES)
        capacity = MAX_ENTRIES;
    void *map = mmap(NULL, capacity * sizeof *ring, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        capacity = 0;
        max_bytes = 0;
        return -errno;
    }
    ring = map;
    return 0;
}

/* Under the lock: take the oldest entries until within bounds. */
static size_t take_overflow(struct quarantined *out)
{
    size_t taken = 0;
    while (count > 0 && taken < EVICT_BATCH &&
           (atomic_load_explicit(&bytes, memory_order_relaxed) > max_bytes || count == capacity)) {
        out[taken++] = ring[head];
        atomic_fetch_sub_explicit(&bytes, ring[head].size, memory_order_relaxed);
        memset(&ring[head], 0, sizeof ring[head]);
        head = (head + 1) % capacity;
        count--;
    }
    return taken;
}

/* The blocks eviction will check a few pushes from now are cold by then
 * (the quarantine is megabytes long): ask for their first bytes and the
 * header before them now, so that the check does not wait for memory. */
#define PREFETCH_AHEAD 4

static void prefetch_block(uintptr_t user)
{
    __builtin_prefetch((const void *)(user - 64));
    __builtin_prefetch((const void *)user);
    __builtin_prefetch((const void *)(user + 64));
}

static void prefetch_soon_evicted(void)
{
    if (count > PREFETCH_AHEAD)
        prefetch_block(ring[(head + PREFETCH_AHEAD) % capacity].user);
}

/* A batch, with the blocks a few places on asked for meanwhile. */
static void evict_all(const struct quarantined *batch, size_t taken, quarantine_evict *evict,
                      void *context)
{
    for (size_t i = 0; i < taken && i < PREFETCH_AHEAD; i++)
        prefetch_block(batch[i].user);
    for (size_t i = 0; i < taken; i++) {
        if (i + PREFETCH_AHEAD < taken)
            prefetch_block(batch[i + PREFETCH_AHEAD].user);
        evict(&batch[i], context);
    }
}

void quarantine_push(const struct quarantined *block, quarantine_evict *evict, void *context)
{
    if (capacity == 0 || block->size > max_bytes) {
        evict(block, context);
        return;
    }
    struct quarantined batch[EVICT_BATCH];
    size_t taken;
    pthread_mutex_lock(&lock);
    if (count == capacity) {
        taken = take_overflow(batch); /* make room first */
    } else {
        taken = 0;
    }
    ring[(head + count) % capacity] = *block;
    count++;
    prefetch_soon_evicted();
    atomic_fetch_add_explicit(&bytes, block->size, memory_order_relaxed);
    for (;;) {
        taken += take_overflow(batch + taken);
        if (taken < EVICT_BATCH || !(atomic_load_explicit(&bytes, memory_order_relaxed) > max_bytes))
            break;
        /* A full batch and still over the bound: hand it back, go on. */
        pthread_mutex_unlock(&lock);
        evict_all(batch, taken, evict, context);
        taken = 0;
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    evict_all(batch, taken, evict, context);
}

int quarantine_find(uintptr_t user, struct quarantined *out)
{
    /* head and count are read without the lock: a stale pair only moves
     * the window, which stays inside the ring. */
    size_t first = *(volatile size_t *)&head, filled = *(volatile size_t *)&count;
    if (capacity == 0 || first >= capacity || filled > capacity)
        return 0;
    for (size_t n = 0; n < filled; n++) {
        volatile const struct quarantined *entry = &ring[(first + n) % capacity];
        if (entry->user == user) {
            out->user = entry->user;
            out->size = entry->size;
            out->free_stack = entry->free_stack;
            return out->user == user;
        }
    }
    return 0;
}

void quarantine_stats(struct quarantine_stats *out)
{
    out->blocks = count;
    out->bytes = atomic_load_explicit(&bytes, memory_order_relaxed);
    out->max_bytes = max_bytes;
}

void quarantine_lock(void) { pthread_mutex_lock(&lock); }
void quarantine_unlock(void) { pthread_mutex_unlock(&lock); }
