/* block.c: header, guards and fill patterns of the hook layer's blocks.
 * World: signal-safe (pure memory work; the caller knows the memory is
 * the block's). */
#include "block.h"

#include "block_scan.h"

#include <string.h>

void block_layout_init(struct block_layout *layout, size_t guard, uint32_t secret)
{
    layout->front_guard = (guard + 15) & ~(size_t)15;
    layout->rear_guard = guard;
    layout->secret = secret;
}

size_t block_front(const struct block_layout *layout, size_t alignment)
{
    size_t front = BLOCK_HEADER_SIZE + layout->front_guard;
    return (front + alignment - 1) & ~(alignment - 1);
}

size_t block_real_size(const struct block_layout *layout, size_t size, size_t alignment)
{
    size_t extra = block_front(layout, alignment) + layout->rear_guard;
    if (size > BLOCK_SIZE_MAX || size > SIZE_MAX - extra)
        return 0;
    return size + extra;
}

static unsigned log2_of(size_t power_of_two)
{
    return (unsigned)__builtin_ctzll((unsigned long long)power_of_two);
}

/* Of everything but the state byte, which changes by atomic steps alone:
 * a walk never sees a state and a check word of different moments. */
static uint32_t check_word(const struct block_layout *layout, uintptr_t user,
                           const struct block_header *header)
{
    uint64_t h = (header->size_and_state & ~(uint64_t)0xff) ^ ((uint64_t)header->alloc_stack << 32) ^
                 user;
    h ^= layout->secret;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53u;
    return (uint32_t)(h ^ (h >> 29));
}

void block_prepare(const struct block_layout *layout, uintptr_t user, size_t size,
                   size_t alignment, stack_id alloc_stack, size_t usable)
{
    struct block_header *header = block_header_of(layout, user);
    header->size_and_state = (uint64_t)size << 16 | (uint64_t)log2_of(alignment) << 8 | BLOCK_LIVE;
    header->alloc_stack = alloc_stack;
    header->check = check_word(layout, user, header);
    memset((char *)user - layout->front_guard, FRONT_GUARD_PATTERN, layout->front_guard);
    if (usable > size)
        memset((char *)user + size, REAR_GUARD_PATTERN, usable - size);
}

void block_resize(const struct block_layout *layout, uintptr_t user, size_t old_size,
                  size_t new_size)
{
    struct block_header *header = block_header_of(layout, user);
    /* Shrinking: the bytes given up become rear guard before the header
     * says so, so that a walk that reads either header finds its guard. */
    if (new_size < old_size)
        memset((char *)user + new_size, REAR_GUARD_PATTERN, old_size - new_size);
    uint64_t word = __atomic_load_n(&header->size_and_state, __ATOMIC_RELAXED);
    struct block_header updated = { (uint64_t)new_size << 16 | (word & 0xffff),
                                    header->alloc_stack, 0 };
    updated.check = check_word(layout, user, &updated);
    /* A walk that reads the header half-written finds its check word wrong
     * and passes the block by, as it does a block being handed out. */
    __atomic_store_n(&header->size_and_state, updated.size_and_state, __ATOMIC_RELAXED);
    __atomic_store_n(&header->check, updated.check, __ATOMIC_RELEASE);
}

int block_claim_free(const struct block_layout *layout, uintptr_t user)
{
    struct block_header *header = block_header_of(layout, user);
    uint64_t live = __atomic_load_n(&header->size_and_state, __ATOMIC_ACQUIRE);
    if ((live & BLOCK_STATE_MASK) != BLOCK_LIVE)
        return 0;
    uint64_t freeing = (live & ~(uint64_t)0xff) | BLOCK_FREEING;
    return __atomic_compare_exchange_n(&header->size_and_state, &live, freeing, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void block_finish_free(const struct block_layout *layout, uintptr_t user)
{
    struct block_header *header = block_header_of(layout, user);
    uint64_t freeing = __atomic_load_n(&header->size_and_state, __ATOMIC_RELAXED);
    /* Release: the fill is visible to whoever sees FREED. */
    __atomic_store_n(&header->size_and_state, (freeing & ~(uint64_t)0xff) | BLOCK_FREED,
                     __ATOMIC_RELEASE);
}

int block_read(const struct block_layout *layout, uintptr_t user, struct block_facts *facts)
{
    struct block_header header;
    memcpy(&header, block_header_of(layout, user), sizeof header);
    /* What the header says was written before it (a freed block's fill):
     * read after it. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (header.check != check_word(layout, user, &header))
        return 0;
    unsigned state = (unsigned)(header.size_and_state & BLOCK_STATE_MASK);
    unsigned alignment_log2 = (unsigned)(header.size_and_state >> 8 & 0xff);
    if (state < BLOCK_LIVE || state > BLOCK_FREEING || alignment_log2 < 4 || alignment_log2 > 40)
        return 0;
    facts->size = (size_t)(header.size_and_state >> 16);
    facts->alignment = (size_t)1 << alignment_log2;
    facts->state = (enum block_state)state;
    facts->alloc_stack = header.alloc_stack;
    facts->ignored = (header.size_and_state & BLOCK_IGNORED) != 0;
    return 1;
}

int block_set_ignored(const struct block_layout *layout, uintptr_t user)
{
    struct block_header *header = block_header_of(layout, user);
    uint64_t word = __atomic_load_n(&header->size_and_state, __ATOMIC_ACQUIRE);
    do {
        if ((word & BLOCK_STATE_MASK) != BLOCK_LIVE)
            return 0;
    } while (!__atomic_compare_exchange_n(&header->size_and_state, &word, word | BLOCK_IGNORED, 0,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return 1;
}

uintptr_t block_real(const struct block_layout *layout, uintptr_t user, size_t alignment)
{
    return user - block_front(layout, alignment);
}

/* The first byte of [BYTES, BYTES + COUNT) that is not BYTE, known to be
 * there: the slow path, once a wide compare saw a difference. */
static size_t first_other(const unsigned char *bytes, size_t count, unsigned char byte)
{
    size_t i = 0;
    while (i < count && bytes[i] == byte)
        i++;
    return i;
}

static uint64_t load_word(const unsigned char *bytes)
{
    uint64_t word;
    memcpy(&word, bytes, 8); /* one unaligned load */
    return word;
}

/* 64 bytes at a time with the architecture's vectors (block_scan.h), the
 * tail as one overlapping load: a freed block's fill is checked at every
 * eviction and both guards at every free and eviction, the hook layer's
 * byte work (5-8% of the samples on churn with 8-byte words). Reads only
 * [BYTES, BYTES + COUNT), and calls nothing: signal-safe. */
static int first_difference(const unsigned char *bytes, size_t count, int pattern, size_t *at)
{
    unsigned char byte = (unsigned char)pattern;
    if (count < 16) {
        uint64_t wide = 0x0101010101010101u * byte;
        if (count >= 8 && load_word(bytes) == wide && load_word(bytes + count - 8) == wide)
            return 0;
        if (count < 8 && first_other(bytes, count, byte) == count)
            return 0;
        *at = first_other(bytes, count, byte);
        return 1;
    }
    size_t i = block_scan_wide(bytes, count, byte);
    if (i == BLOCK_SCAN_HOLDS)
        return 0;
    /* The first differing byte is in [i, i + 64): bytes before i hold. */
    *at = i + first_other(bytes + i, count - i, byte);
    return 1;
}

/* 1 if COUNT bytes all hold BYTE; a guard of 8 to 16 bytes (the default
 * 16) is two loads, checked at every free and every eviction. */
static inline int holds(const unsigned char *bytes, size_t count, unsigned char byte)
{
    if (count >= 8 && count <= 16) {
        uint64_t wide = 0x0101010101010101u * byte;
        return load_word(bytes) == wide && load_word(bytes + count - 8) == wide;
    }
    size_t at;
    return !first_difference(bytes, count, byte, &at);
}

int block_guards_damaged(const struct block_layout *layout, uintptr_t user, size_t size,
                         long *damage)
{
    if (holds((const unsigned char *)user - layout->front_guard, layout->front_guard,
              FRONT_GUARD_PATTERN) &&
        holds((const unsigned char *)user + size, layout->rear_guard, REAR_GUARD_PATTERN))
        return 0;
    size_t at;
    /* In front, the damaged byte nearest the block: where an underflow began. */
    const unsigned char *front = (const unsigned char *)user;
    size_t guard = layout->front_guard;
    if (first_difference(front - guard, guard, FRONT_GUARD_PATTERN, &at)) {
        for (size_t back = 1; back <= guard; back++) {
            if (front[-(long)back] != FRONT_GUARD_PATTERN) {
                *damage = -(long)back;
                return 1;
            }
        }
    }
    if (first_difference((const unsigned char *)user + size, layout->rear_guard,
                         REAR_GUARD_PATTERN, &at)) {
        *damage = (long)(size + at);
        return 1;
    }
    return 0;
}

void block_fill(uintptr_t user, size_t size, size_t limit, int byte)
{
    if (byte >= 0)
        memset((void *)user, byte, size < limit ? size : limit);
}

int block_fill_changed(uintptr_t user, size_t size, size_t limit, int byte, size_t *changed)
{
    if (byte < 0)
        return 0;
    return first_difference((const unsigned char *)user, size < limit ? size : limit, byte,
                            changed);
}
