/* quarantine.c: a ring of freed blocks under one mutex, with a hash index
 * that a lock-free reader can follow.
 * World: push normal (mutex, a thread-specific key); find signal-safe
 * (lock-free reads).
 *
 * Hand-written because it runs inside free(): no malloc. The ring lives in
 * its own mapping (MAP_NORESERVE, committed as it fills), sized for the
 * byte bound filled with the smallest blocks; the index is a table of
 * chain heads (one per ring slot, rounded up to a power of two) with the
 * chains linked through the slots. Evicted blocks are handed back after
 * the lock is dropped, in batches, so that the C library's free never runs
 * under our lock.
 *
 * Each slot is a seqlock: its writer (under the mutex) makes the sequence
 * odd, writes, makes it even again; a reader takes what it copied only if
 * the sequence was even and the same before and after the copy. So a
 * block is never paired with the free stack of the block that took its
 * slot meanwhile, and the crash handler's lookup follows one short chain
 * instead of scanning up to a quarter of a million entries.
 *
 * In front of the ring, each thread has a batch of its own (static
 * storage, seqlock entries like the ring's): a free takes the mutex once
 * per batch, not once per block. A lookup reads the ring, the batches,
 * then the ring again, since a flush puts a block into the ring before it
 * empties its entry. */
#include "quarantine.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define EVICT_BATCH 32
#define SMALLEST_BLOCK 16
#define MAX_ENTRIES ((size_t)1 << 24)
#define MAX_CHAIN_STEPS 4096       /* a reader's bound, whatever it meets */

struct slot {
    _Atomic uint32_t sequence;     /* odd while its writer is in it */
    _Atomic uint32_t next;         /* the next slot of its chain, + 1; 0 ends it */
    _Atomic uintptr_t user;        /* 0: empty */
    _Atomic size_t size;
    _Atomic stack_id free_stack;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *ring;
static _Atomic uint32_t *chains;   /* per hash: the first slot, + 1; 0: none */
static unsigned chain_bits;
static size_t capacity, head, count;    /* head: the oldest entry */
static _Atomic size_t bytes;
static size_t max_bytes;

static size_t chain_of(uintptr_t user)
{
    return (size_t)(((uint64_t)(user >> 4) * 0x9e3779b97f4a7c15u) >> (64 - chain_bits));
}

int quarantine_init(size_t bound)
{
    max_bytes = bound;
    if (bound == 0)
        return 0;
    capacity = bound / SMALLEST_BLOCK + 1;
    if (capacity > MAX_ENTRIES)
        capacity = MAX_ENTRIES;
    chain_bits = 1;
    while (((size_t)1 << chain_bits) < capacity)
        chain_bits++;
    size_t ring_size = capacity * sizeof *ring, chains_size = ((size_t)1 << chain_bits) * 4;
    void *map = mmap(NULL, ring_size + chains_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        capacity = 0;
        max_bytes = 0;
        return -errno;
    }
    ring = map;
    chains = (_Atomic uint32_t *)((char *)map + ring_size);
    return 0;
}

/* Under the lock: the slot's contents, as a seqlock writer. */
static void slot_write(struct slot *slot, uintptr_t user, size_t size, stack_id free_stack,
                       uint32_t next)
{
    uint32_t sequence = atomic_load_explicit(&slot->sequence, memory_order_relaxed);
    atomic_store_explicit(&slot->sequence, sequence + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&slot->user, user, memory_order_relaxed);
    atomic_store_explicit(&slot->size, size, memory_order_relaxed);
    atomic_store_explicit(&slot->free_stack, free_stack, memory_order_relaxed);
    atomic_store_explicit(&slot->next, next, memory_order_relaxed);
    atomic_store_explicit(&slot->sequence, sequence + 2, memory_order_release);
}

/* Under the lock: slot INDEX (holding USER) out of its chain. Its own
 * next link stays (take_overflow keeps it when it empties the slot), so
 * that a reader standing on it goes on along the chain. */
static void unlink_slot(size_t index, uintptr_t user)
{
    _Atomic uint32_t *link = &chains[chain_of(user)];
    for (size_t steps = 0; steps < capacity; steps++) {
        uint32_t at = atomic_load_explicit(link, memory_order_relaxed);
        if (at == 0)
            return;
        if (at == index + 1) {
            atomic_store_explicit(link, atomic_load_explicit(&ring[index].next,
                                                             memory_order_relaxed),
                                  memory_order_release);
            return;
        }
        link = &ring[at - 1].next;
    }
}

/* Under the lock: take the oldest entries until within bounds, at most
 * ROOM of them. */
static size_t take_overflow(struct quarantined *out, size_t room)
{
    size_t taken = 0;
    while (count > 0 && taken < room &&
           (atomic_load_explicit(&bytes, memory_order_relaxed) > max_bytes || count == capacity)) {
        struct slot *slot = &ring[head];
        struct quarantined *block = &out[taken++];
        block->user = atomic_load_explicit(&slot->user, memory_order_relaxed);
        block->size = atomic_load_explicit(&slot->size, memory_order_relaxed);
        block->free_stack = atomic_load_explicit(&slot->free_stack, memory_order_relaxed);
        atomic_fetch_sub_explicit(&bytes, block->size, memory_order_relaxed);
        unlink_slot(head, block->user);
        slot_write(slot, 0, 0, 0, atomic_load_explicit(&slot->next, memory_order_relaxed));
        head = (head + 1) % capacity;
        count--;
    }
    return taken;
}

/* Under the lock: BLOCK into the next slot, at the head of its chain. */
static void put(const struct quarantined *block)
{
    size_t index = (head + count) % capacity;
    _Atomic uint32_t *first = &chains[chain_of(block->user)];
    slot_write(&ring[index], block->user, block->size, block->free_stack,
               atomic_load_explicit(first, memory_order_relaxed));
    atomic_store_explicit(first, (uint32_t)(index + 1), memory_order_release);
    count++;
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
        prefetch_block(atomic_load_explicit(&ring[(head + PREFETCH_AHEAD) % capacity].user,
                                            memory_order_relaxed));
}

/* A batch, its first blocks asked for (the evict function asks for the
 * next ones as it goes). */
static void evict_all(const struct quarantined *batch, size_t taken, quarantine_evict *evict,
                      void *context)
{
    if (taken == 0)
        return;
    for (size_t i = 0; i < taken && i < PREFETCH_AHEAD; i++)
        prefetch_block(batch[i].user);
    evict(batch, taken, context);
}

/* Under the lock, with TAKEN blocks already in BATCH waiting for
 * eviction: make room for one more entry, evicting (the lock dropped
 * meanwhile) when the batch is full. Returns the new TAKEN. */
static size_t room_for_one(struct quarantined *batch, size_t taken, quarantine_evict *evict,
                           void *context)
{
    while (count == capacity) {
        taken += take_overflow(batch + taken, EVICT_BATCH - taken);
        if (taken == EVICT_BATCH) {
            pthread_mutex_unlock(&lock);
            evict_all(batch, taken, evict, context);
            taken = 0;
            pthread_mutex_lock(&lock);
        }
    }
    return taken;
}

/* Under the lock: within the bound again, evicting as above. */
static size_t back_within_bound(struct quarantined *batch, size_t taken,
                                quarantine_evict *evict, void *context)
{
    for (;;) {
        taken += take_overflow(batch + taken, EVICT_BATCH - taken);
        if (taken < EVICT_BATCH ||
            !(atomic_load_explicit(&bytes, memory_order_relaxed) > max_bytes))
            return taken;
        /* A full batch and still over the bound: hand it back, go on. */
        pthread_mutex_unlock(&lock);
        evict_all(batch, taken, evict, context);
        taken = 0;
        pthread_mutex_lock(&lock);
    }
}

int quarantine_would_hold(size_t size)
{
    return capacity != 0 && size <= max_bytes;
}

void quarantine_push(const struct quarantined *block, quarantine_evict *evict, void *context)
{
    if (capacity == 0 || block->size > max_bytes) {
        evict(block, 1, context);
        return;
    }
    struct quarantined batch[EVICT_BATCH];
    pthread_mutex_lock(&lock);
    size_t taken = room_for_one(batch, 0, evict, context);
    put(block);
    prefetch_soon_evicted();
    atomic_fetch_add_explicit(&bytes, block->size, memory_order_relaxed);
    taken = back_within_bound(batch, taken, evict, context);
    pthread_mutex_unlock(&lock);
    evict_all(batch, taken, evict, context);
}

/* ---- the threads' batches ------------------------------------------------ */

/* A thread's blocks on their way to the ring. Only its thread writes it
 * (or, in a fork child, the one thread left); readers copy an entry as a
 * seqlock, as they do a ring slot. A block is always in its batch or in
 * the ring: flushing puts it into the ring before its entry is emptied.
 * Static storage, so that a reader never meets memory given back. */
struct batch {                     /* on lines of its own: no false sharing */
    _Alignas(64) _Atomic int owned;
    unsigned filled;               /* entries [0, filled) hold blocks; its thread's */
    size_t batch_bytes;
    struct slot entries[QUARANTINE_BATCH_BLOCKS];
};

static struct batch batches[QUARANTINE_BATCHES];
static _Atomic unsigned batches_used;      /* a bound on the batches ever owned */
static quarantine_evict *_Atomic batch_evict;
static void *_Atomic batch_context;

static __thread struct batch *own_batch __attribute__((tls_model("initial-exec")));
/* No batch any more (it was flushed at exit, or none was free): push
 * straight to the ring. */
static __thread int without_batch __attribute__((tls_model("initial-exec")));
/* Inside a batched push: a signal handler's free meanwhile goes straight
 * to the ring. */
static __thread int in_batch __attribute__((tls_model("initial-exec")));
static pthread_key_t batch_key;
static int batch_key_made;
static pthread_once_t batch_key_once = PTHREAD_ONCE_INIT;

/* Under the lock: BATCH's blocks into the ring, each entry emptied just
 * after its block is put (a reader finds it in one place or the other:
 * quarantine_find looks in the ring before and after the batches). */
static size_t move_batch(struct batch *batch, struct quarantined *evicting, size_t taken,
                         quarantine_evict *evict, void *context)
{
    for (unsigned i = 0; i < QUARANTINE_BATCH_BLOCKS; i++) {
        struct slot *entry = &batch->entries[i];
        uintptr_t user = atomic_load_explicit(&entry->user, memory_order_relaxed);
        if (user == 0 || atomic_load_explicit(&entry->sequence, memory_order_relaxed) % 2 != 0)
            continue; /* empty, or half written by a thread a fork left behind */
        struct quarantined block = {
            user, atomic_load_explicit(&entry->size, memory_order_relaxed),
            atomic_load_explicit(&entry->free_stack, memory_order_relaxed),
        };
        taken = room_for_one(evicting, taken, evict, context);
        put(&block);
        atomic_fetch_add_explicit(&bytes, block.size, memory_order_relaxed);
        slot_write(entry, 0, 0, 0, 0);
    }
    batch->filled = 0;
    batch->batch_bytes = 0;
    return taken;
}

static void flush_batch(struct batch *batch, quarantine_evict *evict, void *context)
{
    struct quarantined evicting[EVICT_BATCH];
    pthread_mutex_lock(&lock);
    size_t taken = move_batch(batch, evicting, 0, evict, context);
    prefetch_soon_evicted();
    taken = back_within_bound(evicting, taken, evict, context);
    pthread_mutex_unlock(&lock);
    evict_all(evicting, taken, evict, context);
}

/* Thread exit (the key's destructor): the batch into the ring, given up. */
static void flush_at_exit(void *value)
{
    struct batch *batch = value;
    quarantine_evict *evict = atomic_load_explicit(&batch_evict, memory_order_relaxed);
    in_batch = 1;
    if (evict != NULL)
        flush_batch(batch, evict, atomic_load_explicit(&batch_context, memory_order_relaxed));
    own_batch = NULL;
    without_batch = 1; /* frees after this (other destructors) go to the ring */
    in_batch = 0;
    atomic_store_explicit(&batch->owned, 0, memory_order_release);
}

static void make_batch_key(void)
{
    batch_key_made = pthread_key_create(&batch_key, flush_at_exit) == 0;
}

/* A free batch for this thread, or NULL (then none is tried again). */
static struct batch *claim_batch(void)
{
    pthread_once(&batch_key_once, make_batch_key);
    without_batch = 1;
    if (!batch_key_made)
        return NULL;
    for (unsigned i = 0; i < QUARANTINE_BATCHES; i++) {
        int free_batch = 0;
        if (atomic_load_explicit(&batches[i].owned, memory_order_relaxed) != 0 ||
            !atomic_compare_exchange_strong(&batches[i].owned, &free_batch, 1))
            continue;
        if (pthread_setspecific(batch_key, &batches[i]) != 0) {
            atomic_store_explicit(&batches[i].owned, 0, memory_order_release);
            return NULL;
        }
        unsigned used = atomic_load_explicit(&batches_used, memory_order_relaxed);
        while (used < i + 1 &&
               !atomic_compare_exchange_weak(&batches_used, &used, i + 1))
            ;
        without_batch = 0;
        own_batch = &batches[i];
        return own_batch;
    }
    return NULL;
}

void quarantine_push_batched(const struct quarantined *block, quarantine_evict *evict,
                             void *context)
{
    struct batch *batch = own_batch;
    if (capacity == 0 || block->size > max_bytes || in_batch ||
        (batch == NULL && (without_batch || (batch = claim_batch()) == NULL))) {
        quarantine_push(block, evict, context);
        return;
    }
    in_batch = 1;
    /* Written once, not at every free: a line every thread would write. */
    if (atomic_load_explicit(&batch_evict, memory_order_relaxed) != evict ||
        atomic_load_explicit(&batch_context, memory_order_relaxed) != context) {
        atomic_store_explicit(&batch_evict, evict, memory_order_relaxed);
        atomic_store_explicit(&batch_context, context, memory_order_relaxed);
    }
    slot_write(&batch->entries[batch->filled++], block->user, block->size, block->free_stack, 0);
    batch->batch_bytes += block->size;
    if (batch->filled == QUARANTINE_BATCH_BLOCKS || batch->batch_bytes >= max_bytes / 64)
        flush_batch(batch, evict, context);
    in_batch = 0;
}

void quarantine_after_fork_in_child(void)
{
    quarantine_evict *evict = atomic_load_explicit(&batch_evict, memory_order_relaxed);
    if (evict == NULL)
        return; /* no batched push yet */
    void *context = atomic_load_explicit(&batch_context, memory_order_relaxed);
    unsigned used = atomic_load_explicit(&batches_used, memory_order_acquire);
    for (unsigned i = 0; i < used; i++) {
        struct batch *batch = &batches[i];
        if (atomic_load_explicit(&batch->owned, memory_order_relaxed) == 0)
            continue;
        flush_batch(batch, evict, context);
        if (batch != own_batch)
            atomic_store_explicit(&batch->owned, 0, memory_order_release); /* its thread is gone */
    }
}

/* ---- lookup -------------------------------------------------------------- */

/* SLOT copied as a seqlock reader: 1 if it held USER whole. *NEXT gets
 * its chain link. */
static int slot_read(struct slot *slot, uintptr_t user, struct quarantined *out, uint32_t *next)
{
    uint32_t before = atomic_load_explicit(&slot->sequence, memory_order_acquire);
    uintptr_t found = atomic_load_explicit(&slot->user, memory_order_relaxed);
    size_t size = atomic_load_explicit(&slot->size, memory_order_relaxed);
    stack_id free_stack = atomic_load_explicit(&slot->free_stack, memory_order_relaxed);
    *next = atomic_load_explicit(&slot->next, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    uint32_t after = atomic_load_explicit(&slot->sequence, memory_order_relaxed);
    if (before != after || before % 2 != 0 || found != user)
        return 0;
    out->user = found;
    out->size = size;
    out->free_stack = free_stack;
    return 1;
}

static int find_in_ring(uintptr_t user, struct quarantined *out)
{
    uint32_t at = atomic_load_explicit(&chains[chain_of(user)], memory_order_acquire);
    /* A chain changed meanwhile may lead astray or round: bounded steps,
     * every index checked; what is taken was checked whole (seqlock). */
    for (size_t steps = 0; at != 0 && at <= capacity && steps < MAX_CHAIN_STEPS; steps++) {
        uint32_t next;
        if (slot_read(&ring[at - 1], user, out, &next))
            return 1;
        at = next;
    }
    return 0;
}

static int find_in_batches(uintptr_t user, struct quarantined *out)
{
    unsigned used = atomic_load_explicit(&batches_used, memory_order_acquire);
    for (unsigned i = 0; i < used && i < QUARANTINE_BATCHES; i++) {
        if (atomic_load_explicit(&batches[i].owned, memory_order_relaxed) == 0)
            continue; /* given up: flushed, empty */
        for (unsigned e = 0; e < QUARANTINE_BATCH_BLOCKS; e++) {
            uint32_t next;
            if (slot_read(&batches[i].entries[e], user, out, &next))
                return 1;
        }
    }
    return 0;
}

int quarantine_find(uintptr_t user, struct quarantined *out)
{
    if (capacity == 0 || user == 0)
        return 0;
    return find_in_ring(user, out) || find_in_batches(user, out) || find_in_ring(user, out);
}

void quarantine_stats(struct quarantine_stats *out)
{
    out->blocks = count;
    out->bytes = atomic_load_explicit(&bytes, memory_order_relaxed);
    out->max_bytes = max_bytes;
}

void quarantine_lock(void) { pthread_mutex_lock(&lock); }
void quarantine_unlock(void) { pthread_mutex_unlock(&lock); }
