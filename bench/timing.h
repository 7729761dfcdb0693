/* timing.h: clocks, medians and the interleaving harness of the benchmarks.
 *
 * Why this shape: the machine has two noisy cores, so one long run of one
 * contender followed by one long run of the next measures the neighbours
 * as much as the code. Instead every repetition runs one batch of each
 * contender, in an order that rotates between repetitions, and we keep
 * the median of the repetitions, which ignores the batches that a
 * neighbour or an interrupt spoiled. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((unused)) int compare_doubles(const void *a, const void *b)
{
    double left = *(const double *)a, right = *(const double *)b;
    return left < right ? -1 : left > right;
}

/* The median of COUNT values (which are left as they were). */
static inline double median(const double *values, size_t count)
{
    double sorted[count ? count : 1];

    if (count == 0)
        return 0;
    memcpy(sorted, values, count * sizeof *values);
    qsort(sorted, count, sizeof *sorted, compare_doubles);
    if (count % 2)
        return sorted[count / 2];
    return (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

/* BENCH_QUICK=1 (make bench-smoke, in CI): every benchmark builds and
 * runs, with the fewest repetitions and short batches, so that one that
 * cannot build or run fails; no number it prints means anything. */
static inline int bench_quick(void)
{
    const char *quick = getenv("BENCH_QUICK");
    return quick != NULL && strcmp(quick, "1") == 0;
}

/* How many repetitions or samples to take of FULL. */
static inline int bench_count(int full)
{
    return bench_quick() && full > 3 ? 3 : full;
}

/* One contender of an interleaved measurement: BATCH runs the operation
 * ITERATIONS times. */
struct contender {
    const char *name;
    void (*batch)(long iterations);
};

#define MAX_CONTENDERS 4
#define MAX_REPETITIONS 101

/* How many iterations make one batch of CONTENDER last about TARGET_NS, so
 * that the clock's own cost and resolution do not matter. Always inlined
 * into measure_interleaved, so that every batch runs at the same stack
 * depth (bench/symbols.c relies on it for print_trace_fd). */
static inline __attribute__((always_inline)) long calibrate(const struct contender *contender,
                                                            uint64_t target_ns)
{
    long iterations = 1;

    contender->batch(1); /* warm: caches, lazy binding, first-call work */
    for (;;) {
        uint64_t start = now_ns();
        contender->batch(iterations);
        uint64_t elapsed = now_ns() - start;
        if (elapsed >= target_ns / 4 || iterations >= (1L << 24))
            return elapsed == 0 ? iterations
                                : (long)((double)iterations * target_ns / elapsed) + 1;
        iterations *= 2;
    }
}

/* Run REPETITIONS rounds of one batch per contender, rotating who goes
 * first, and store each contender's median ns per operation in RESULT.
 * noipa: not inlined nor cloned, so a batch always runs exactly two frames
 * below the caller of measure_interleaved. */
static __attribute__((noipa, unused)) void
measure_interleaved(const struct contender *contenders, int count, int repetitions,
                    uint64_t batch_ns, double *result)
{
    static double samples[MAX_CONTENDERS][MAX_REPETITIONS];
    long iterations[MAX_CONTENDERS];

    if (repetitions > MAX_REPETITIONS)
        repetitions = MAX_REPETITIONS;
    if (bench_quick())
        batch_ns /= 20;
    for (int c = 0; c < count; c++)
        iterations[c] = calibrate(&contenders[c], batch_ns);
    for (int r = 0; r < repetitions; r++) {
        for (int k = 0; k < count; k++) {
            int c = (r + k) % count;
            uint64_t start = now_ns();
            contenders[c].batch(iterations[c]);
            samples[c][r] = (double)(now_ns() - start) / (double)iterations[c];
        }
    }
    for (int c = 0; c < count; c++)
        result[c] = median(samples[c], (size_t)repetitions);
}

#endif
