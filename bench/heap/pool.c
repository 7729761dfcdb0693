/* pool.c: the pool workload of issue 14 (make bench, bench/heap/budget.sh).
 * A pool of 10,000 live blocks and 2,000,000 random replacements: each
 * frees a random slot from main, then allocates its replacement 15 calls
 * deep along one of 256 distinct call paths, of a mixed size. The same
 * sequence every run (a fixed-seed generator); it prints a checksum of the
 * bytes it read back, so that every contender is seen to do the same work.
 * Usage: pool [replacements [live blocks]] (defaults 2000000 10000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Under callgrind (bench/heap/budget.sh) the replacements are a profile
 * of their own: counters zeroed before them, dumped after them, so not
 * the start, the first filling or the end. Natively the two requests are
 * a few instructions each. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_ZERO_STATS
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

#define DEPTH 15
#define PATHS 256

static void **live;
static size_t *live_size;
static uint64_t state = 0x2545f4914f6cdd1du;
static uint64_t checksum;

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* Mostly small, as real programs allocate: 16-256 bytes nine times in
 * ten, up to 4 KiB most of the rest, now and then 64 KiB (churn.c's). */
static size_t pick_size(uint64_t r)
{
    unsigned kind = (unsigned)(r % 100);
    if (kind < 90)
        return 16 + (r >> 8) % 241;
    if (kind < 99)
        return 256 + (r >> 8) % 3841;
    return 65536;
}

__attribute__((noinline)) static void *allocate_at_leaf(size_t size)
{
    unsigned char *block = malloc(size);
    if (block == NULL) {
        perror("pool: malloc");
        exit(1);
    }
    block[0] = (unsigned char)size;
    block[size - 1] = (unsigned char)(size >> 8);
    return block;
}

/* Four functions; main calls level 13, which calls level 12 ... level 0
 * calls allocate_at_leaf, which calls malloc: 15 calls deep. A path is 13
 * choices of two bits (levels 13 to 1 pick the next), so the 256 paths
 * are 256 distinct stacks of the same depth. Each level
 * uses its result after the call: no tail calls, every level a frame. */
typedef void *level_fn(unsigned depth, uint32_t path, size_t size);
static level_fn level_a, level_b, level_c, level_d;
static level_fn *const levels[4] = { level_a, level_b, level_c, level_d };

#define LEVEL(name, salt)                                                        \
    __attribute__((noinline)) static void *name(unsigned depth, uint32_t path,   \
                                                size_t size)                     \
    {                                                                            \
        void *block = depth == 0 ? allocate_at_leaf(size)                        \
                                 : levels[path & 3](depth - 1, path >> 2, size); \
        __asm__ volatile("" : "+r"(block) : "i"(salt) : "memory");               \
        return block;                                                            \
    }
LEVEL(level_a, 1)
LEVEL(level_b, 2)
LEVEL(level_c, 3)
LEVEL(level_d, 4)

int main(int argc, char **argv)
{
    long replacements = argc > 1 ? atol(argv[1]) : 2000000;
    long count = argc > 2 ? atol(argv[2]) : 10000;
    uint32_t paths[PATHS];

    if (replacements < 0 || count <= 0) {
        fprintf(stderr, "usage: pool [replacements [live blocks]]\n");
        return 2;
    }
    live = calloc((size_t)count, sizeof *live);
    live_size = calloc((size_t)count, sizeof *live_size);
    if (live == NULL || live_size == NULL)
        return 1;
    /* 256 distinct 26-bit paths (main enters through level_a). */
    for (int i = 0; i < PATHS; i++) {
        int fresh;
        do {
            paths[i] = (uint32_t)next_random() & ((1u << (2 * (DEPTH - 2))) - 1);
            fresh = 1;
            for (int j = 0; j < i; j++)
                fresh &= paths[j] != paths[i];
        } while (!fresh);
    }
    for (long i = 0; i < count; i++) {
        uint64_t r = next_random();
        live_size[i] = pick_size(r);
        live[i] = level_a(DEPTH - 2, paths[(r >> 32) % PATHS], live_size[i]);
    }
    CALLGRIND_ZERO_STATS;
    for (long i = 0; i < replacements; i++) {
        uint64_t r = next_random();
        size_t slot = (size_t)((r >> 24) % (uint64_t)count);
        unsigned char *old = live[slot];
        checksum += old[0] + old[live_size[slot] - 1];
        free(old);
        live_size[slot] = pick_size(r);
        live[slot] = level_a(DEPTH - 2, paths[(r >> 44) % PATHS], live_size[slot]);
    }
    CALLGRIND_DUMP_STATS_AT("pool replacements");
    for (long i = 0; i < count; i++)
        free(live[i]);
    free(live);
    free(live_size);
    printf("%ld replacements of %ld live blocks, checksum %llu\n", replacements, count,
           (unsigned long long)checksum);
    return 0;
}
