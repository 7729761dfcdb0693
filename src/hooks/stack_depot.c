/* stack_depot.c: distinct stacks stored once, in an append-only arena.
 * World: signal-safe (atomics and memory only; mmap at init).
 *
 * Hand-written because it runs inside malloc and in the crash handler: no
 * malloc, no lock. The model is compiler-rt's sanitizer StackDepot: a
 * hash table of chains whose heads are swapped in with compare-and-swap,
 * entries appended at an atomically bumped offset and never removed.
 * Two threads storing the same new stack at once may both append it; the
 * loser of the swap looks again and takes the winner's id, so one stack
 * has one id, and the loser's entry is wasted (rare, bounded). */
#include "stack_depot.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BUCKET_BITS 20
#define BUCKETS (1u << BUCKET_BITS)
#define MAX_RESERVE ((size_t)32 << 30)
#define ENTRY_MAGIC 0x5d

struct entry {
    _Atomic uint32_t next;       /* id of the next entry of the chain, 0: none */
    uint32_t hash;
    uint16_t count;
    uint8_t magic;
    uint8_t reserved[5];
    uint64_t frames[];
};

static _Atomic uint32_t *buckets;
static char *arena;
static size_t arena_size;
static _Atomic size_t arena_top;   /* bytes used, a multiple of 8 */
static _Atomic size_t stored;
static _Atomic int ready;          /* 0, 1 while a thread maps, 2 when done */

static int map_arena(size_t reserve_bytes)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void *table = mmap(NULL, BUCKETS * sizeof *buckets, PROT_READ | PROT_WRITE, flags, -1, 0);
    void *space = mmap(NULL, reserve_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (table == MAP_FAILED || space == MAP_FAILED) {
        int error = -errno;
        if (table != MAP_FAILED)
            munmap(table, BUCKETS * sizeof *buckets);
        if (space != MAP_FAILED)
            munmap(space, reserve_bytes);
        return error;
    }
    buckets = table;
    arena = space;
    arena_size = reserve_bytes;
    atomic_store_explicit(&arena_top, 8, memory_order_relaxed); /* id 0: none */
    return 0;
}

/* No mutex, so that the whole file stays in the signal-safe world: one
 * thread maps, the others sleep a millisecond at a time until it is done. */
int stack_depot_init(size_t reserve_bytes)
{
    if (reserve_bytes < sizeof(struct entry) + STACK_DEPOT_MAX_FRAMES * 8)
        return -EINVAL;
    if (reserve_bytes > MAX_RESERVE)
        reserve_bytes = MAX_RESERVE;
    for (;;) {
        int state = 0;
        if (atomic_compare_exchange_strong(&ready, &state, 1)) {
            int result = map_arena(reserve_bytes);
            atomic_store_explicit(&ready, result == 0 ? 2 : 0, memory_order_release);
            return result;
        }
        if (state == 2)
            return 0;
        struct timespec pause = { 0, 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
}

static uint32_t hash_frames(void *const *frames, int count)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)count;
    for (int i = 0; i < count; i++) {
        h ^= (uint64_t)(uintptr_t)frames[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (uint32_t)h;
}

static struct entry *entry_at(stack_id id)
{
    return (struct entry *)(arena + (size_t)id * 8);
}

static int same_stack(const struct entry *entry, uint32_t hash, void *const *frames, int count)
{
    if (entry->hash != hash || entry->count != count)
        return 0;
    for (int i = 0; i < count; i++)
        if (entry->frames[i] != (uint64_t)(uintptr_t)frames[i])
            return 0;
    return 1;
}

/* Walk the chain from FIRST down to (not including) STOP. */
static stack_id find_in_chain(stack_id first, stack_id stop, uint32_t hash, void *const *frames,
                              int count)
{
    for (stack_id id = first; id != 0 && id != stop;
         id = atomic_load_explicit(&entry_at(id)->next, memory_order_acquire))
        if (same_stack(entry_at(id), hash, frames, count))
            return id;
    return 0;
}

static stack_id append(uint32_t hash, void *const *frames, int count)
{
    size_t bytes = sizeof(struct entry) + (size_t)count * 8;
    size_t offset = atomic_fetch_add_explicit(&arena_top, bytes, memory_order_relaxed);
    if (offset > arena_size || bytes > arena_size - offset) {
        atomic_fetch_sub_explicit(&arena_top, bytes, memory_order_relaxed);
        return 0; /* full: keep the top from running on past the end */
    }
    struct entry *entry = (struct entry *)(arena + offset);
    entry->hash = hash;
    entry->count = (uint16_t)count;
    entry->magic = ENTRY_MAGIC;
    for (int i = 0; i < count; i++)
        entry->frames[i] = (uint64_t)(uintptr_t)frames[i];
    return (stack_id)(offset / 8);
}

stack_id stack_depot_put(void *const *frames, int count)
{
    if (atomic_load_explicit(&ready, memory_order_acquire) != 2 || count <= 0 || frames == NULL)
        return 0;
    if (count > STACK_DEPOT_MAX_FRAMES)
        count = STACK_DEPOT_MAX_FRAMES;
    uint32_t hash = hash_frames(frames, count);
    _Atomic uint32_t *bucket = &buckets[hash & (BUCKETS - 1)];
    stack_id head = atomic_load_explicit(bucket, memory_order_acquire);
    stack_id found = find_in_chain(head, 0, hash, frames, count);
    if (found != 0)
        return found;
    stack_id fresh = append(hash, frames, count);
    if (fresh == 0)
        return 0;
    for (;;) {
        atomic_store_explicit(&entry_at(fresh)->next, head, memory_order_relaxed);
        stack_id seen = head;
        if (atomic_compare_exchange_weak_explicit(bucket, &head, fresh, memory_order_release,
                                                  memory_order_acquire)) {
            atomic_fetch_add_explicit(&stored, 1, memory_order_relaxed);
            return fresh;
        }
        /* Others published meanwhile: one of theirs may be this stack. */
        found = find_in_chain(head, seen, hash, frames, count);
        if (found != 0)
            return found;
    }
}

int stack_depot_get(stack_id id, void **frames, int capacity)
{
    if (id == 0 || atomic_load_explicit(&ready, memory_order_acquire) != 2)
        return 0;
    size_t top = atomic_load_explicit(&arena_top, memory_order_acquire);
    size_t offset = (size_t)id * 8;
    if (offset + sizeof(struct entry) > top)
        return 0;
    const struct entry *entry = entry_at(id);
    int count = entry->count;
    if (entry->magic != ENTRY_MAGIC || count <= 0 || count > STACK_DEPOT_MAX_FRAMES ||
        offset + sizeof(struct entry) + (size_t)count * 8 > top)
        return 0;
    /* An id into the middle of an entry reads frames as a header: the
     * stored hash of the frames must then match too. */
    if (hash_frames((void *const *)entry->frames, count) != entry->hash)
        return 0;
    for (int i = 0; i < count && i < capacity; i++)
        frames[i] = (void *)(uintptr_t)entry->frames[i];
    return count;
}

void stack_depot_stats(struct stack_depot_stats *out)
{
    out->stacks = atomic_load_explicit(&stored, memory_order_relaxed);
    out->bytes_used = atomic_load_explicit(&arena_top, memory_order_relaxed);
    out->bytes_reserved = atomic_load_explicit(&ready, memory_order_acquire) == 2 ? arena_size : 0;
}
