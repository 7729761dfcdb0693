/* stack_depot.c: distinct stacks stored once, in an append-only arena.
 * World: signal-safe (atomics and memory only; mmap when the table grows).
 *
 * Hand-written because it runs inside malloc and in the crash handler: no
 * malloc, no lock, no waiting on another thread. Entries are appended at
 * an atomically bumped offset and never removed, as in compiler-rt's
 * StackDepot; an entry's id is its offset in 8-byte words. Each entry
 * also holds its stack's counts (stack_counts.h: what the allocations made
 * there add up to), so that a free finds them from the id in its block.
 *
 * The index is an open-addressed table of 8-byte slots (id << 32 | hash,
 * 0 empty), probed linearly, so a lookup reads the stored entry only when
 * the whole 32-bit hash matches: a hit costs one table line and the
 * entry's lines. The table starts at 4096 slots (32 KiB, warm in the
 * cache) and grows to twice its size when it is half full: the next level
 * is mapped and every slot of the old one is either copied into it or,
 * if empty, frozen (a value no insert can replace), by the thread that
 * grew it and by any thread inserting meanwhile (chunks claimed with an
 * atomic counter; copying is idempotent). A lookup that meets a frozen
 * slot goes on in the next level; until the copy is complete, lookups
 * start in the old level. Since slots are only ever filled or frozen,
 * never emptied, a stack is in a level or frozen out of it, never both:
 * one stack keeps one id.
 *
 * Two threads storing the same new stack at once may both append it; the
 * loser of the slot's compare-and-swap sees the winner's slot, takes its
 * id, and its own entry is wasted (rare, bounded). */
#include "stack_depot.h"
#include "stack_counts.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MAX_RESERVE ((size_t)32 << 30)
#define ENTRY_MAGIC 0x5d
#define FIRST_SLOT_BITS 12              /* 4096 slots, 32 KiB */
#define MAX_LEVELS 21                   /* up to 2^32 slots */
#define SLOT_EMPTY 0u
#define SLOT_FROZEN 1u                  /* id 0: never a stored stack's slot */
#define MIGRATE_CHUNK 512               /* slots copied per claim */

/* COUNTS: what the allocations made at this stack add up to
 * (stack_counts.c); zero for a stack no allocation was counted on. */
struct entry {
    uint32_t hash;
    uint16_t count;
    uint8_t magic;
    uint8_t reserved;
    struct stack_counts counts;
    uint64_t frames[];
};

/* Level K holds 4096 << K slots. Migration into level K (K > 0) copies
 * level K-1: chunks are claimed by counting up CLAIMED, counted in DONE
 * when copied; COPIED says every slot of level K-1 is in level K or
 * frozen. */
struct level {
    _Atomic(_Atomic uint64_t *) slots;
    _Atomic uint32_t claimed;
    _Atomic uint32_t done;
    _Atomic int copied;
    char pad[64 - sizeof(void *) - 3 * sizeof(uint32_t)];
};

_Static_assert(offsetof(struct entry, counts) == STACK_DEPOT_COUNTS_OFFSET,
               "stack_depot_counts finds the counts there");

static _Alignas(64) struct level levels[MAX_LEVELS];
/* Read by every lookup, written at initialisation and growth only. */
static _Alignas(64) _Atomic int top_level; /* the newest level */
static _Atomic int ready;                  /* 0, 1 while a thread maps, 2 when done */
char *stack_depot_arena;                   /* set once, before any id is given */
static size_t arena_size;
/* Written by inserts only; apart from what every lookup reads. */
static _Alignas(64) _Atomic size_t arena_top;   /* bytes used, a multiple of 8 */
static _Atomic size_t stored;

static size_t level_slots(int level)
{
    return (size_t)1 << (FIRST_SLOT_BITS + level);
}

static int map_arena(size_t reserve_bytes)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    size_t table_bytes = level_slots(0) * sizeof(uint64_t);
    void *table = mmap(NULL, table_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    void *space = mmap(NULL, reserve_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (table == MAP_FAILED || space == MAP_FAILED) {
        int error = -errno;
        if (table != MAP_FAILED)
            munmap(table, table_bytes);
        if (space != MAP_FAILED)
            munmap(space, reserve_bytes);
        return error;
    }
    atomic_store_explicit(&levels[0].slots, table, memory_order_relaxed);
    atomic_store_explicit(&levels[0].copied, 1, memory_order_relaxed); /* nothing before it */
    stack_depot_arena = space;
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

/* Random odd keys, one per position, each below 2^64 - 2^48 so that no
 * user-space address plus its key wraps to 0 (a zero factor would hide
 * the other word of its pair). */
static const uint64_t hash_keys[STACK_DEPOT_MAX_FRAMES] = {
    0x9daa37e51b591d75u, 0xc15521b1b3dca50bu, 0x86f0ce2ea6ec39c1u, 0x3f372617f0baef3bu,
    0xbc3199944567ceb1u, 0x4a800646417a8105u, 0x12979bfcbbeb508fu, 0x732242fda8902e33u,
    0x77744cca4d909eb3u, 0xdf7142dcaf29e6f9u, 0x64d0b50f658c6763u, 0xe8af30f7c70b53bfu,
    0x4375d0341e4f6f2bu, 0xdeeda8b23927f7d7u, 0x50cef798e6c648e7u, 0xcecf4f4e5ba80781u,
    0x5c54e05b42a9ba21u, 0xa1fa7d4acde560dbu, 0x842a2f9da1b4ba07u, 0x293a9acc2652f8ffu,
    0xaa59c1698d242349u, 0x467c0714a9fbd797u, 0x02b7075d2a3a0c79u, 0x11e760a5a6d5b30bu,
    0x98466a921f7ea79du, 0x071d14815649f8e9u, 0x46287225154d1eb1u, 0xdaa4ed3c3454fae5u,
    0x61c2df96fa5e2d63u, 0x95522f9a67574c03u, 0xef2eab42fd8cfe33u, 0xe57b37e7704b3d09u,
    0x182a3add9b872a77u, 0xa40f9ca3df62692du, 0xe2db0c01afd798c3u, 0x942af46d1c8d5359u,
    0xa32dc48296ce3859u, 0x5d3ffd11a23c1699u, 0xdd66a3582e62fe87u, 0xbf3ba33a183c74e3u,
    0x7c93a36cdff27e9fu, 0xac18900483872e75u, 0x45552a83319f69e3u, 0x9fc6245573dda733u,
    0x7c17d84637db2983u, 0x4804ef24cc5994d1u, 0x412ecd08801f772du, 0x1f05f4d11a38b927u,
    0xffcd88b9d170d65bu, 0x4754665a16ebc80fu, 0x1e47921f47d9e875u, 0x29663157072ad68bu,
    0x69703feebd8700ebu, 0xafaaa7131d26e313u, 0x960066c386988191u, 0x6cd92a4017cdc79bu,
    0xf9493d417afdf261u, 0x2b1a7ae1af748c55u, 0x62fe005b88ebf5e7u, 0x4f3d01447485d165u,
    0x75b728bf7c208071u, 0x6aedf88b6fe205d5u, 0xd3a1c30b986f3043u, 0x41a204e918485df7u,
};

static uint64_t hash_pair(void *const *frames, int i)
{
    return ((uint64_t)(uintptr_t)frames[i] + hash_keys[i]) *
           ((uint64_t)(uintptr_t)frames[i + 1] + hash_keys[i + 1]);
}

/* Pairs of words multiplied and summed (NH, as UMAC hashes): one multiply
 * per two words, each independent of the others, so that they overlap;
 * keys by position, so that the order counts; then a full avalanche, since
 * a product's high bits depend on more input bits than its low ones. Only
 * a hash table's hash: equal hashes are compared word for word. */
static uint32_t hash_frames(void *const *frames, int count)
{
    uint64_t sum = (uint64_t)count * 0x9e3779b97f4a7c15u, other = 0;
    int i = 0;
    for (; i + 3 < count; i += 4) {
        sum += hash_pair(frames, i);
        other += hash_pair(frames, i + 2);
    }
    if (i + 1 < count) {
        sum += hash_pair(frames, i);
        i += 2;
    }
    if (i < count)
        other += ((uint64_t)(uintptr_t)frames[i] + hash_keys[i]) * 0xc4ceb9fe1a85ec53u;
    sum ^= other * 0x9e3779b97f4a7c15u;
    sum ^= sum >> 33;
    sum *= 0xff51afd7ed558ccdu;
    sum ^= sum >> 33;
    sum *= 0xc4ceb9fe1a85ec53u;
    sum ^= sum >> 33;
    return (uint32_t)sum;
}

static struct entry *entry_at(stack_id id)
{
    return (struct entry *)(stack_depot_arena + (size_t)id * 8);
}

static uint64_t slot_value(stack_id id, uint32_t hash)
{
    return (uint64_t)id << 32 | hash;
}

/* The entry's frames (a 16-frame stack and its thread take 136 bytes,
 * after the header and the counts: 200 in all) are asked for at once, so
 * that their misses overlap with the header's instead of following it.
 * A prefetch never faults. */
static int same_stack(const struct entry *entry, void *const *frames, int count)
{
    __builtin_prefetch(&entry->frames[0]);
    __builtin_prefetch(&entry->frames[count / 2]);
    __builtin_prefetch((const char *)&entry->frames[count] - 1);
    return entry->count == count && memcmp(entry->frames, frames, (size_t)count * 8) == 0;
}

/* Where a probe for a stack ended: its id, or the level and slot where it
 * may be inserted (an empty slot, seen empty). */
struct probe {
    stack_id found;
    int level;
    size_t slot;
};

/* Probe for the stack from LEVEL's slot START on, into later levels past
 * frozen slots. */
static struct probe find(int level, size_t start, uint32_t hash, void *const *frames, int count)
{
    for (;;) {
        _Atomic uint64_t *slots = atomic_load_explicit(&levels[level].slots, memory_order_acquire);
        size_t mask = level_slots(level) - 1;
        size_t i = start & mask;
        for (size_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
            uint64_t value = atomic_load_explicit(&slots[i], memory_order_acquire);
            if (value == SLOT_EMPTY)
                return (struct probe){ 0, level, i };
            if (value == SLOT_FROZEN)
                break;
            if ((uint32_t)value == hash && same_stack(entry_at((stack_id)(value >> 32)), frames, count))
                return (struct probe){ (stack_id)(value >> 32), level, i };
        }
        /* A frozen slot, or a full table: the next level, if any. */
        if (level + 1 >= MAX_LEVELS ||
            atomic_load_explicit(&levels[level + 1].slots, memory_order_acquire) == NULL)
            return (struct probe){ 0, -1, 0 };
        level++;
        start = hash;
    }
}

/* Put ID (its entry stored) where the probe P ended, or find the stack
 * that another thread put there first. Returns the id the stack has. */
static stack_id insert(struct probe p, stack_id id, uint32_t hash, void *const *frames, int count)
{
    uint64_t mine = slot_value(id, hash);
    while (p.found == 0 && p.level >= 0) {
        _Atomic uint64_t *slots = atomic_load_explicit(&levels[p.level].slots, memory_order_acquire);
        uint64_t seen = SLOT_EMPTY;
        if (atomic_compare_exchange_strong_explicit(&slots[p.slot], &seen, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            return id;
        if (seen == mine)
            return id; /* a migration copied it already */
        /* Filled or frozen meanwhile: look on from that slot. */
        p = find(p.level, p.slot, hash, frames, count);
    }
    return p.found;
}

/* Copy one slot of level TO - 1 into level TO, or freeze it if empty. */
static void migrate_slot(_Atomic uint64_t *slot, int to)
{
    uint64_t value = atomic_load_explicit(slot, memory_order_acquire);
    while (value == SLOT_EMPTY)
        if (atomic_compare_exchange_weak_explicit(slot, &value, SLOT_FROZEN, memory_order_acq_rel,
                                                  memory_order_acquire))
            return;
    if (value == SLOT_FROZEN)
        return;
    stack_id id = (stack_id)(value >> 32);
    const struct entry *entry = entry_at(id);
    uint32_t hash = (uint32_t)value;
    void *const *frames = (void *const *)entry->frames;
    insert(find(to, hash, hash, frames, entry->count), id, hash, frames, entry->count);
}

static void migrate_chunk(int to, uint32_t chunk)
{
    _Atomic uint64_t *old = atomic_load_explicit(&levels[to - 1].slots, memory_order_acquire);
    for (size_t i = (size_t)chunk * MIGRATE_CHUNK; i < (size_t)(chunk + 1) * MIGRATE_CHUNK; i++)
        migrate_slot(&old[i], to);
}

/* Copy chunks of level TO - 1 into TO: at most LIMIT claims, or all of
 * them if EVERY (then also those claimed by others and not yet done, for a
 * thread that claimed them may never come back: a signal handler that
 * jumped out). */
static void migrate(int to, uint32_t limit, int every)
{
    struct level *into = &levels[to];
    uint32_t chunks = (uint32_t)(level_slots(to - 1) / MIGRATE_CHUNK);
    for (uint32_t n = 0; n < limit; n++) {
        uint32_t chunk = atomic_fetch_add_explicit(&into->claimed, 1, memory_order_relaxed);
        if (chunk >= chunks)
            break;
        migrate_chunk(to, chunk);
        if (atomic_fetch_add_explicit(&into->done, 1, memory_order_acq_rel) + 1 == chunks)
            atomic_store_explicit(&into->copied, 1, memory_order_release);
    }
    if (every && !atomic_load_explicit(&into->copied, memory_order_acquire)) {
        for (uint32_t chunk = 0; chunk < chunks; chunk++)
            migrate_chunk(to, chunk);
        atomic_store_explicit(&into->copied, 1, memory_order_release);
    }
}

/* Level FROM is half full: map the next one (racing threads may both map;
 * one mapping is kept), publish it and copy FROM into it. */
static void grow(int from)
{
    if (from + 1 >= MAX_LEVELS)
        return;
    migrate(from, 0, 1); /* the copy into FROM is finished first */
    struct level *next = &levels[from + 1];
    if (atomic_load_explicit(&next->slots, memory_order_acquire) == NULL) {
        size_t bytes = level_slots(from + 1) * sizeof(uint64_t);
        void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map == MAP_FAILED)
            return; /* FROM fills up further; a later insert tries again */
        _Atomic uint64_t *expected = NULL;
        if (!atomic_compare_exchange_strong_explicit(&next->slots, &expected, map,
                                                     memory_order_acq_rel, memory_order_acquire))
            munmap(map, bytes);
    }
    int expected_top = from;
    atomic_compare_exchange_strong_explicit(&top_level, &expected_top, from + 1,
                                            memory_order_acq_rel, memory_order_acquire);
    migrate(from + 1, UINT32_MAX, 0);
}

static stack_id append(uint32_t hash, void *const *frames, int count)
{
    size_t bytes = sizeof(struct entry) + (size_t)count * 8;
    size_t offset = atomic_fetch_add_explicit(&arena_top, bytes, memory_order_relaxed);
    if (offset > arena_size || bytes > arena_size - offset) {
        atomic_fetch_sub_explicit(&arena_top, bytes, memory_order_relaxed);
        return 0; /* full: keep the top from running on past the end */
    }
    struct entry *entry = (struct entry *)(stack_depot_arena + offset);
    entry->hash = hash;
    entry->count = (uint16_t)count;
    entry->magic = ENTRY_MAGIC;
    memcpy(entry->frames, frames, (size_t)count * 8);
    return (stack_id)(offset / 8);
}

/* The level a lookup starts in: the newest, once the older one is copied
 * into it. */
static int first_level(int *top)
{
    *top = atomic_load_explicit(&top_level, memory_order_acquire);
    return atomic_load_explicit(&levels[*top].copied, memory_order_acquire) ? *top : *top - 1;
}

uint32_t stack_depot_hash(void *const *frames, int count)
{
    return hash_frames(frames, count);
}

stack_id stack_depot_put(void *const *frames, int count)
{
    if (count <= 0 || frames == NULL)
        return 0;
    if (count > STACK_DEPOT_MAX_FRAMES)
        count = STACK_DEPOT_MAX_FRAMES;
    return stack_depot_put_hashed(frames, count, hash_frames(frames, count));
}

stack_id stack_depot_put_hashed(void *const *frames, int count, uint32_t hash)
{
    if (atomic_load_explicit(&ready, memory_order_acquire) != 2 || count <= 0 ||
        count > STACK_DEPOT_MAX_FRAMES || frames == NULL)
        return 0;
    int top;
    int level = first_level(&top);
    /* Most lookups end at their first slot: that one without the loop. */
    _Atomic uint64_t *slots = atomic_load_explicit(&levels[level].slots, memory_order_acquire);
    uint64_t value = atomic_load_explicit(&slots[hash & (level_slots(level) - 1)], memory_order_acquire);
    if ((uint32_t)value == hash && value >> 32 != 0 &&
        same_stack(entry_at((stack_id)(value >> 32)), frames, count))
        return (stack_id)(value >> 32);
    struct probe p = find(level, hash, hash, frames, count);
    if (p.found != 0 || p.level < 0)
        return p.found;
    if (level != top)
        migrate(top, 1, 0); /* a copy is under way: help it along */
    stack_id fresh = append(hash, frames, count);
    if (fresh == 0)
        return 0;
    stack_id id = insert(p, fresh, hash, frames, count);
    if (id == fresh) {
        size_t now = atomic_fetch_add_explicit(&stored, 1, memory_order_relaxed) + 1;
        top = atomic_load_explicit(&top_level, memory_order_acquire);
        if (now > level_slots(top) / 2)
            grow(top);
    }
    return id;
}

/* Whether ID is in the table: a stored stack's id, not an entry that lost
 * a race nor one still being written. */
static int indexed(stack_id id, uint32_t hash)
{
    uint64_t wanted = slot_value(id, hash);
    for (int level = 0; level < MAX_LEVELS; level++) {
        _Atomic uint64_t *slots = atomic_load_explicit(&levels[level].slots, memory_order_acquire);
        if (slots == NULL)
            return 0;
        size_t mask = level_slots(level) - 1;
        size_t i = hash & mask;
        for (size_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
            uint64_t value = atomic_load_explicit(&slots[i], memory_order_acquire);
            if (value == wanted)
                return 1;
            if (value == SLOT_EMPTY)
                return 0;
            if (value == SLOT_FROZEN)
                break;
        }
    }
    return 0;
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
     * stored hash of the frames must then match, and the table must name
     * this id with that hash. */
    uint32_t hash = entry->hash;
    if (hash_frames((void *const *)entry->frames, count) != hash || !indexed(id, hash))
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
