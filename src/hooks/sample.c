/* sample.c: which allocations sample=N guards (sample.h). Each thread
 * draws the gap to its next sample from its own splitmix64 generator,
 * seeded by sample_seed and the thread's order of arrival, so that a
 * single-threaded run with a fixed seed samples the same allocations. */
#define _GNU_SOURCE
#include "sample.h"
#include "guard_pool.h"
#include "heap.h"

#include <stdatomic.h>
#include <string.h>

__thread int64_t sample_countdown __attribute__((tls_model("initial-exec")));
static __thread uint64_t generator __attribute__((tls_model("initial-exec")));
static __thread int seeded __attribute__((tls_model("initial-exec")));

static uint64_t base_seed;
static _Atomic uint64_t threads_seeded;

void sample_init(uint64_t seed)
{
    base_seed = seed;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The gap to the next sample: uniform in [1, 2N - 1], N on average. */
static int64_t draw(void)
{
    uint64_t n = heap.options.sample;
    return (int64_t)(1 + splitmix64(&generator) % (2 * n - 1));
}

int sample_slow(void)
{
    if (__atomic_load_n((int *)&heap.phase, __ATOMIC_ACQUIRE) != HEAP_READY || heap_busy) {
        sample_countdown = 1; /* not yet, or the library's own: ask again next time */
        return 0;
    }
    if (heap.options.sample == 0) {
        sample_countdown = INT64_MAX; /* off: never again on this thread */
        return 0;
    }
    if (!seeded) {
        seeded = 1;
        generator = base_seed + 0x632be59bd9b4e019ull * atomic_fetch_add(&threads_seeded, 1);
        sample_countdown = draw();
        if (--sample_countdown > 0)
            return 0;
    }
    sample_countdown = draw();
    return 1;
}

void *sample_allocate(size_t size, int zeroed)
{
    heap_busy++;
    stack_id stack = heap_capture(HEAP_CAPTURE_ALLOCATION);
    void *user = guard_pool_allocate(size, 16, stack);
    heap_busy--;
    if (user == NULL)
        return zeroed ? __libc_calloc(1, size) : __libc_malloc(size);
    if (zeroed)
        memset(user, 0, size); /* a slot handed out again holds its last block's bytes */
    return user;
}
