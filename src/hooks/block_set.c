/* block_set.c: the set of block addresses as a bitmap over the address
 * space, one bit per 16-byte granule.
 * World: signal-safe throughout (atomic bit operations, no lock); insert
 * may mmap the first time a gigabyte of address space gets a block.
 *
 * Hand-written because it runs inside malloc: it cannot call malloc, so no
 * general-purpose container applies. A bitmap rather than a hash table
 * (the first version was a sharded one) because every operation is then
 * one atomic instruction on a word that is usually in cache, with no lock
 * and no probing, and it costs an eighth of a bit per heap byte: the
 * shadow-memory idea of AddressSanitizer, reduced to one bit.
 *
 * The 47-bit user address space is cut into 1 GiB regions. A region's
 * bitmap (8 MiB of address space, MAP_NORESERVE, so only the pages that
 * hold a set bit cost memory) is mapped when its first block arrives and
 * never unmapped, so a signal handler can always read it. Two summary
 * levels (a bit per bitmap word that may be nonzero, a bit per region that
 * exists) make a walk over every block, and the search for the block
 * before an address, skip the empty space. Summary bits are set and never
 * cleared: they only say where to look. */
#include "block_set.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define GRANULE_SHIFT 4                    /* blocks are 16-byte aligned */
#define REGION_SHIFT 30
#define ADDRESS_BITS 47
#define REGIONS ((size_t)1 << (ADDRESS_BITS - REGION_SHIFT))
#define GRANULES_PER_REGION ((size_t)1 << (REGION_SHIFT - GRANULE_SHIFT))
#define WORDS_PER_REGION (GRANULES_PER_REGION / 64)
#define SUMMARY_WORDS (WORDS_PER_REGION / 64)

struct region {
    _Atomic uint64_t summary[SUMMARY_WORDS];  /* bit w: words[w] may be nonzero */
    _Atomic uint64_t words[WORDS_PER_REGION];
};

static _Atomic(struct region *) regions[REGIONS];
static _Atomic uint64_t regions_present[REGIONS / 64];

static size_t region_index(uintptr_t address)
{
    return (size_t)(address >> REGION_SHIFT);
}

static size_t granule_in_region(uintptr_t address)
{
    return (size_t)(address >> GRANULE_SHIFT) & (GRANULES_PER_REGION - 1);
}

static uintptr_t granule_address(size_t region, size_t granule)
{
    return (uintptr_t)region << REGION_SHIFT | (uintptr_t)granule << GRANULE_SHIFT;
}

static void set_bit(_Atomic uint64_t *word, uint64_t bit)
{
    if (!(atomic_load_explicit(word, memory_order_relaxed) & bit))
        atomic_fetch_or_explicit(word, bit, memory_order_release);
}

static struct region *region_for_insert(size_t index)
{
    struct region *region = atomic_load_explicit(&regions[index], memory_order_acquire);
    if (region != NULL)
        return region;
    void *map = mmap(NULL, sizeof *region, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    struct region *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&regions[index], &expected, map,
                                                memory_order_acq_rel, memory_order_acquire)) {
        set_bit(&regions_present[index / 64], (uint64_t)1 << (index % 64));
        return map;
    }
    munmap(map, sizeof *region); /* another thread mapped it first */
    /* Its presence bit may not be set yet: walks must see our block now. */
    set_bit(&regions_present[index / 64], (uint64_t)1 << (index % 64));
    return expected;
}

int block_set_insert(uintptr_t block)
{
    if (block % (1u << GRANULE_SHIFT) != 0 || region_index(block) >= REGIONS)
        return -EINVAL;
    struct region *region = region_for_insert(region_index(block));
    if (region == NULL)
        return -ENOMEM;
    size_t granule = granule_in_region(block);
    size_t word = granule / 64;
    set_bit(&region->summary[word / 64], (uint64_t)1 << (word % 64));
    atomic_fetch_or_explicit(&region->words[word], (uint64_t)1 << (granule % 64),
                             memory_order_release);
    return 0;
}

static struct region *region_of(uintptr_t block)
{
    if (block % (1u << GRANULE_SHIFT) != 0 || region_index(block) >= REGIONS)
        return NULL;
    return atomic_load_explicit(&regions[region_index(block)], memory_order_acquire);
}

int block_set_remove(uintptr_t block)
{
    struct region *region = region_of(block);
    if (region == NULL)
        return 0;
    size_t granule = granule_in_region(block);
    uint64_t bit = (uint64_t)1 << (granule % 64);
    return (atomic_fetch_and_explicit(&region->words[granule / 64], ~bit,
                                      memory_order_acq_rel) & bit) != 0;
}

int block_set_contains(uintptr_t block)
{
    struct region *region = region_of(block);
    if (region == NULL)
        return 0;
    size_t granule = granule_in_region(block);
    return (atomic_load_explicit(&region->words[granule / 64], memory_order_acquire) >>
            (granule % 64)) & 1;
}

/* ---- walks --------------------------------------------------------------- */

/* Visit the blocks of REGION in granules [first, end). */
static int each_in_region(size_t index, const struct region *region, size_t first, size_t end,
                          int (*visit)(uintptr_t, void *), void *context)
{
    for (size_t s = first / 4096; s < (end + 4095) / 4096; s++) {
        uint64_t summary = atomic_load_explicit(&region->summary[s], memory_order_acquire);
        while (summary != 0) {
            size_t word = s * 64 + (size_t)__builtin_ctzll(summary);
            summary &= summary - 1;
            uint64_t bits = atomic_load_explicit(&region->words[word], memory_order_acquire);
            while (bits != 0) {
                size_t granule = word * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                if (granule < first)
                    continue;
                if (granule >= end)
                    return 0;
                int stop = visit(granule_address(index, granule), context);
                if (stop)
                    return stop;
            }
        }
    }
    return 0;
}

int block_set_each_in(uintptr_t low, uintptr_t high,
                      int (*visit)(uintptr_t block, void *context), void *context)
{
    /* In granules: from the first at or above LOW to the last below HIGH. */
    uint64_t limit = (uint64_t)1 << (ADDRESS_BITS - GRANULE_SHIFT);
    if (low > ((uintptr_t)1 << ADDRESS_BITS) - 16)
        return 0; /* no block there; and low + 15 below must not wrap */
    uint64_t from = ((uint64_t)low + 15) >> GRANULE_SHIFT;
    uint64_t to = ((uint64_t)high + 15) >> GRANULE_SHIFT;
    if (high > UINTPTR_MAX - 15 || to > limit)
        to = limit;
    for (uint64_t region_start = from & ~(uint64_t)(GRANULES_PER_REGION - 1); region_start < to;
         region_start += GRANULES_PER_REGION) {
        size_t index = (size_t)(region_start / GRANULES_PER_REGION);
        if (!((atomic_load_explicit(&regions_present[index / 64], memory_order_acquire) >>
               (index % 64)) & 1))
            continue;
        const struct region *region = atomic_load_explicit(&regions[index], memory_order_acquire);
        size_t first = from > region_start ? (size_t)(from - region_start) : 0;
        size_t end = to - region_start < GRANULES_PER_REGION ? (size_t)(to - region_start)
                                                            : GRANULES_PER_REGION;
        int stop = each_in_region(index, region, first, end, visit, context);
        if (stop)
            return stop;
    }
    return 0;
}

int block_set_each(int (*visit)(uintptr_t block, void *context), void *context)
{
    return block_set_each_in(0, (uintptr_t)1 << ADDRESS_BITS, visit, context);
}

/* The highest set bit of REGION at a granule <= LAST, or SIZE_MAX. */
static size_t last_in_region(const struct region *region, size_t last)
{
    size_t word = last / 64;
    uint64_t bits = atomic_load_explicit(&region->words[word], memory_order_acquire);
    if (last % 64 != 63)
        bits &= ((uint64_t)1 << (last % 64 + 1)) - 1;
    if (bits != 0)
        return word * 64 + 63 - (size_t)__builtin_clzll(bits);
    /* Earlier words, found through the summary. */
    for (size_t s = word / 64 + 1; s-- > 0;) {
        uint64_t summary = atomic_load_explicit(&region->summary[s], memory_order_acquire);
        if (s == word / 64)
            summary &= word % 64 == 0 ? 0 : ((uint64_t)1 << (word % 64)) - 1;
        while (summary != 0) {
            size_t w = s * 64 + 63 - (size_t)__builtin_clzll(summary);
            summary &= ~((uint64_t)1 << (w % 64));
            uint64_t found = atomic_load_explicit(&region->words[w], memory_order_acquire);
            if (found != 0)
                return w * 64 + 63 - (size_t)__builtin_clzll(found);
        }
    }
    return SIZE_MAX;
}

uintptr_t block_set_last_at_or_before(uintptr_t address)
{
    if (region_index(address) >= REGIONS)
        address = ((uintptr_t)1 << ADDRESS_BITS) - 1;
    size_t last = granule_in_region(address);
    for (size_t index = region_index(address) + 1; index-- > 0; last = GRANULES_PER_REGION - 1) {
        if (!((atomic_load_explicit(&regions_present[index / 64], memory_order_acquire) >>
               (index % 64)) & 1))
            continue;
        const struct region *region = atomic_load_explicit(&regions[index], memory_order_acquire);
        size_t granule = last_in_region(region, last);
        if (granule != SIZE_MAX)
            return granule_address(index, granule);
    }
    return 0;
}

static int count_one(uintptr_t block, void *context)
{
    (void)block;
    ++*(size_t *)context;
    return 0;
}

size_t block_set_count(void)
{
    size_t total = 0;
    block_set_each(count_one, &total);
    return total;
}
