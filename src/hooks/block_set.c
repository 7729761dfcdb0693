/* block_set.c: a sharded open-addressing hash set of block addresses.
 * World: insert/remove/contains normal (one shard mutex each, mmap to
 * grow); block_set_each signal-safe (atomic loads, no lock).
 *
 * Hand-written because it runs inside malloc: it cannot call malloc, so no
 * general-purpose container applies. 256 shards keep threads apart; each
 * is linear probing with backward-shift deletion (no tombstones), grown by
 * doubling at half load. A grown shard's old table is kept, never
 * unmapped, because a signal handler may be walking it: the waste is at
 * most the size of the current tables. */
#include "block_set.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define SHARD_BITS 8
#define SHARDS (1u << SHARD_BITS)
#define FIRST_CAPACITY 512        /* slots; 4 KiB */

struct table {
    size_t capacity;              /* a power of two */
    _Atomic uintptr_t slots[];    /* 0: empty */
};

struct shard {
    pthread_mutex_t lock;
    _Atomic(struct table *) table;
    _Atomic size_t count;
    char padding[64];             /* keep shards' locks on separate lines */
};

static struct shard shards[SHARDS] = {
    [0 ... SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static uint64_t mix(uintptr_t block)
{
    uint64_t h = (uint64_t)block >> 4;   /* blocks are 16-byte aligned */
    h *= 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

static struct shard *shard_of(uintptr_t block)
{
    return &shards[mix(block) >> (64 - SHARD_BITS)];
}

static struct table *table_new(size_t capacity)
{
    size_t bytes = sizeof(struct table) + capacity * sizeof(uintptr_t);
    struct table *table = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (table == MAP_FAILED)
        return NULL;
    table->capacity = capacity; /* mmap gave zeroes: every slot empty */
    return table;
}

static size_t home_slot(const struct table *table, uintptr_t block)
{
    return (size_t)mix(block) & (table->capacity - 1);
}

static void place(struct table *table, uintptr_t block)
{
    size_t mask = table->capacity - 1;
    for (size_t i = home_slot(table, block);; i = (i + 1) & mask) {
        if (atomic_load_explicit(&table->slots[i], memory_order_relaxed) == 0) {
            atomic_store_explicit(&table->slots[i], block, memory_order_release);
            return;
        }
    }
}

/* Under the shard's lock. */
static int grow(struct shard *shard, struct table *old)
{
    struct table *table = table_new(old != NULL ? old->capacity * 2 : FIRST_CAPACITY);
    if (table == NULL)
        return -ENOMEM;
    for (size_t i = 0; old != NULL && i < old->capacity; i++) {
        uintptr_t block = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
        if (block != 0)
            place(table, block);
    }
    atomic_store_explicit(&shard->table, table, memory_order_release);
    return 0;
}

int block_set_insert(uintptr_t block)
{
    struct shard *shard = shard_of(block);
    int result = 0;
    pthread_mutex_lock(&shard->lock);
    struct table *table = atomic_load_explicit(&shard->table, memory_order_relaxed);
    size_t count = atomic_load_explicit(&shard->count, memory_order_relaxed);
    if (table == NULL || (count + 1) * 2 > table->capacity) {
        result = grow(shard, table);
        table = atomic_load_explicit(&shard->table, memory_order_relaxed);
    }
    if (result == 0) {
        place(table, block);
        atomic_store_explicit(&shard->count, count + 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&shard->lock);
    return result;
}

static size_t find(const struct table *table, uintptr_t block)
{
    size_t mask = table->capacity - 1;
    for (size_t i = home_slot(table, block);; i = (i + 1) & mask) {
        uintptr_t here = atomic_load_explicit(&table->slots[i], memory_order_relaxed);
        if (here == block)
            return i;
        if (here == 0)
            return SIZE_MAX;
    }
}

/* Backward-shift deletion: pull later members of the probe run into the
 * hole, so that no search stops early at it. */
static void delete_at(struct table *table, size_t hole)
{
    size_t mask = table->capacity - 1;
    for (size_t i = (hole + 1) & mask;; i = (i + 1) & mask) {
        uintptr_t here = atomic_load_explicit(&table->slots[i], memory_order_relaxed);
        if (here == 0)
            break;
        size_t home = home_slot(table, here);
        /* Movable when its home is not in (hole, i], cyclically. */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            atomic_store_explicit(&table->slots[hole], here, memory_order_release);
            hole = i;
        }
    }
    atomic_store_explicit(&table->slots[hole], 0, memory_order_release);
}

int block_set_remove(uintptr_t block)
{
    struct shard *shard = shard_of(block);
    int removed = 0;
    pthread_mutex_lock(&shard->lock);
    struct table *table = atomic_load_explicit(&shard->table, memory_order_relaxed);
    size_t at = table != NULL ? find(table, block) : SIZE_MAX;
    if (at != SIZE_MAX) {
        delete_at(table, at);
        atomic_fetch_sub_explicit(&shard->count, 1, memory_order_relaxed);
        removed = 1;
    }
    pthread_mutex_unlock(&shard->lock);
    return removed;
}

/* A hit needs no lock: the block was in the set, and only a racing free
 * of the same block (a double free, reported as one) can see it leave.
 * A miss may be a member moved by a concurrent delete: asked again under
 * the lock. Old tables are never unmapped, so reading one is safe. */
int block_set_contains(uintptr_t block)
{
    struct shard *shard = shard_of(block);
    struct table *seen = atomic_load_explicit(&shard->table, memory_order_acquire);
    if (seen != NULL && find(seen, block) != SIZE_MAX)
        return 1;
    pthread_mutex_lock(&shard->lock);
    struct table *table = atomic_load_explicit(&shard->table, memory_order_relaxed);
    int found = table != NULL && find(table, block) != SIZE_MAX;
    pthread_mutex_unlock(&shard->lock);
    return found;
}

int block_set_each(int (*visit)(uintptr_t block, void *context), void *context)
{
    for (unsigned s = 0; s < SHARDS; s++) {
        struct table *table = atomic_load_explicit(&shards[s].table, memory_order_acquire);
        for (size_t i = 0; table != NULL && i < table->capacity; i++) {
            uintptr_t block = atomic_load_explicit(&table->slots[i], memory_order_relaxed);
            int stop = block != 0 ? visit(block, context) : 0;
            if (stop)
                return stop;
        }
    }
    return 0;
}

size_t block_set_count(void)
{
    size_t total = 0;
    for (unsigned s = 0; s < SHARDS; s++)
        total += atomic_load_explicit(&shards[s].count, memory_order_relaxed);
    return total;
}

void block_set_lock_all(void)
{
    for (unsigned s = 0; s < SHARDS; s++)
        pthread_mutex_lock(&shards[s].lock);
}

void block_set_unlock_all(void)
{
    for (unsigned s = SHARDS; s-- > 0;)
        pthread_mutex_unlock(&shards[s].lock);
}
