/* churn.c: the malloc-heavy program of the heap benchmark (make bench).
 * Millions of mixed-size allocations through deep and varied call stacks,
 * a few thousand blocks live at any time, some reallocs and callocs; the
 * same sequence every run (a fixed-seed generator). It prints a checksum
 * of the bytes it read back, so that every variant is seen to have done
 * the same work. Usage: churn [operations] (default 3000000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 4096

static void *live[LIVE];
static size_t live_size[LIVE];
static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t checksum;

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* Mostly small, as real programs allocate: 16-256 bytes nine times in
 * ten, up to 4 KiB most of the rest, now and then 64 KiB. */
static size_t pick_size(uint64_t r)
{
    unsigned kind = (unsigned)(r % 100);
    if (kind < 90)
        return 16 + (r >> 8) % 241;
    if (kind < 99)
        return 256 + (r >> 8) % 3841;
    return 65536;
}

static void touch(unsigned char *block, size_t size)
{
    block[0] = (unsigned char)size;
    block[size - 1] = (unsigned char)(size >> 8);
}

static void replace_one(uint64_t r)
{
    unsigned slot = (unsigned)(r >> 40) % LIVE;
    if (live[slot] != NULL) {
        unsigned char *old = live[slot];
        checksum += old[0] + old[live_size[slot] - 1];
    }
    size_t size = pick_size(r);
    switch ((r >> 20) % 16) {
    case 0: /* grow or shrink in place of a free and a malloc */
        live[slot] = realloc(live[slot], size);
        break;
    case 1:
        free(live[slot]);
        live[slot] = calloc(1, size);
        break;
    default:
        free(live[slot]);
        live[slot] = malloc(size);
        break;
    }
    if (live[slot] == NULL) {
        perror("churn: allocation");
        exit(1);
    }
    live_size[slot] = size;
    touch(live[slot], size);
}

/* Three mutually recursive functions, so stacks differ in depth (4 to 27
 * levels above main) and in shape, as they do in a real program: the
 * shape follows one of 64 fixed paths, so that there are a few thousand
 * distinct stacks, not one per call. */
static void level_a(unsigned depth, uint64_t path, uint64_t r);
static void level_b(unsigned depth, uint64_t path, uint64_t r);

__attribute__((noinline)) static void level_c(unsigned depth, uint64_t path, uint64_t r)
{
    if (depth == 0) {
        replace_one(r);
        return;
    }
    level_a(depth - 1, path >> 1, r);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void level_b(unsigned depth, uint64_t path, uint64_t r)
{
    if (depth == 0) {
        replace_one(r);
        return;
    }
    ((path & 1) ? level_c : level_a)(depth - 1, path >> 1, r);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level_a(unsigned depth, uint64_t path, uint64_t r)
{
    if (depth == 0) {
        replace_one(r);
        return;
    }
    ((path & 1) ? level_b : level_c)(depth - 1, path >> 1, r);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    long operations = argc > 1 ? atol(argv[1]) : 3000000;
    uint64_t paths[64];
    for (int i = 0; i < 64; i++)
        paths[i] = next_random();
    for (long i = 0; i < operations; i++) {
        uint64_t r = next_random();
        level_a(4 + (unsigned)(r >> 59) % 24, paths[(r >> 52) % 64], r);
    }
    for (unsigned slot = 0; slot < LIVE; slot++)
        free(live[slot]);
    printf("%ld operations, checksum %llu\n", operations, (unsigned long long)checksum);
    return 0;
}
