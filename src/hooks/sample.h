/* sample.h: sample=N, a production mode after GWP-ASan: one allocation in
 * N, at random, gets a guarded slot (guard_pool.h) and its stacks; every
 * other one goes straight to glibc as with heap=0. World: normal. */
#ifndef EXECINFO_EX_SAMPLE_H
#define EXECINFO_EX_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Allocations left before the calling thread's next sample. It starts at
 * 0, so that a thread's first allocation takes the slow path, which seeds
 * the thread and may sample that very allocation. */
extern __thread int64_t sample_countdown __attribute__((tls_model("initial-exec")));

int sample_slow(void);

/* 1 when this allocation is to be sampled. The fast path: a decrement. */
static inline int sample_take(void)
{
    if (__builtin_expect(--sample_countdown > 0, 1))
        return 0;
    return sample_slow();
}

/* At initialisation: the seed (sample_seed, or a random one when 0). */
void sample_init(uint64_t seed);

/* A sampled block: guarded, or glibc's when no guard can be had. ZEROED:
 * calloc's. */
void *sample_allocate(size_t size, int zeroed);

#endif
