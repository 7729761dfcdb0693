/* capture.c: warm capture of 10, 30 and 100 frames: our backtrace against
 * glibc's and against libunwind's unw_backtrace called directly.
 *
 * Our backtrace walks the stack with the library's own DWARF CFI reader
 * (src/unwind/: FDEs found through _dl_find_object, simple rules kept in a
 * cache); our library does not use or link libunwind. libunwind is here
 * only as the reference contender: this file is built with
 * -DUNW_LOCAL_ONLY and the bench linked with -lunwind, as a program that
 * calls libunwind itself would be, with libunwind's default caching.
 * Warm, unw_backtrace runs from its trace cache. Our backtrace_ucontext
 * runs in the same rotation, from a context getcontext took once per
 * batch in the batch's own frame (its frame 0 is that frame's pc, so it
 * walks the same frames as backtrace).
 *
 * The stack is made deeper than the largest depth with a noinline
 * recursion, and each call is given a buffer of exactly DEPTH entries, so
 * each call captures DEPTH frames and stops: the count is checked before
 * anything is timed. */
#include <libunwind.h>

#include "bench.h"
#include "timing.h"

#include <execinfo_ex.h>
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>

const int capture_depths[CAPTURE_DEPTHS] = { 10, 30, 100 };
#define STACK_LEVELS 110
#define REPETITIONS 101
#define BATCH_NS 1000000

static void *frames[128];
static int depth;
static volatile int sink;

static void batch_ours(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += backtrace(frames, depth);
}

static void batch_glibc(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += glibc.backtrace(frames, depth);
}

static void batch_libunwind(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += unw_backtrace(frames, depth);
}

/* noinline: the context is of this frame, live while the batch runs. */
__attribute__((noinline)) static void batch_ours_ucontext(long iterations)
{
    ucontext_t context;
    if (getcontext(&context) != 0)
        bench_fail("getcontext failed");
    for (long i = 0; i < iterations; i++)
        sink += backtrace_ucontext(frames, depth, &context);
    __asm__ volatile("" ::: "memory");
}

static int (*const capture_functions[CONTENDER_COUNT])(void **, int) = {
    backtrace, NULL /* glibc.backtrace, known at run time */, unw_backtrace
};

static int capture_with(int contender, void **buffer, int size)
{
    if (contender == GLIBC)
        return glibc.backtrace(buffer, size);
    return capture_functions[contender](buffer, size);
}

/* glibc's contract: frame 0 is a return address inside the caller of
 * backtrace, frame 1 the caller's own return address. noipa: no clone, no
 * inlining, so the addresses below are this very function's. For ours this
 * also checks that the walker skips its own frames (backtrace and the
 * walker's) and nothing more. */
static void *probe_return;
__attribute__((noipa)) static int probe(int contender, void **buffer)
{
    probe_return = __builtin_return_address(0);
    int count = capture_with(contender, buffer, 2);
    __asm__ volatile("" ::: "memory");
    return count;
}

static void check_frame_zero(int contender)
{
    void *buffer[2] = { NULL, NULL };
    int count = probe(contender, buffer);
    uintptr_t start = (uintptr_t)probe, frame0 = (uintptr_t)buffer[0];

    if (count != 2 || frame0 <= start || frame0 >= start + 512 || buffer[1] != probe_return)
        bench_fail("%s: frame 0 is %p, frame 1 %p; expected inside probe() at %p and %p",
                   contender_names[contender], buffer[0], buffer[1], (void *)probe,
                   probe_return);
}

static void measure_at_bottom(struct results *results)
{
    static const struct contender contenders[CONTENDER_COUNT + 1] = {
        { "ours", batch_ours },
        { "glibc", batch_glibc },
        { "libunwind", batch_libunwind },
        { "ours, backtrace_ucontext", batch_ours_ucontext },
    };
    double ns[CONTENDER_COUNT + 1];

    for (int c = 0; c < CONTENDER_COUNT; c++)
        check_frame_zero(c);
    for (int d = 0; d < CAPTURE_DEPTHS; d++) {
        depth = capture_depths[d];
        for (int c = 0; c < CONTENDER_COUNT; c++) {
            int count = capture_with(c, frames, depth);
            if (count != depth)
                bench_fail("%s captured %d frames, not %d", contender_names[c], count, depth);
        }
        /* backtrace_ucontext's count: the batch's sink moves by DEPTH. */
        int before = sink;
        batch_ours_ucontext(1);
        if (sink - before != depth)
            bench_fail("ours, backtrace_ucontext captured %d frames, not %d", sink - before,
                       depth);
        measure_interleaved(contenders, CONTENDER_COUNT + 1, bench_count(REPETITIONS), BATCH_NS, ns);
        for (int c = 0; c < CONTENDER_COUNT; c++)
            results->capture_ns[d][c] = ns[c];
        results->capture_ucontext_ns[d] = ns[CONTENDER_COUNT];
    }
}

/* noinline and not a tail call, so each level is one real frame. */
__attribute__((noinline)) static int descend(int levels, struct results *results)
{
    if (levels == 0) {
        measure_at_bottom(results);
        return 0;
    }
    int below = descend(levels - 1, results);
    __asm__ volatile("" ::: "memory");
    return below + 1;
}

void bench_capture(struct results *results)
{
    printf("\n1. Warm capture: N frames captured out of a deeper stack\n");
    printf("   median of %d interleaved batches of ~%d ms; ns per call (ns per frame)\n\n",
           bench_count(REPETITIONS), BATCH_NS / 1000000);
    descend(STACK_LEVELS, results);
    printf("   %-6s %20s %20s %20s %20s %12s %12s %12s\n", "frames", "ours", "glibc",
           "libunwind", "ours ucontext", "ours/glibc", "unw/glibc", "ours/unw");
    for (int d = 0; d < CAPTURE_DEPTHS; d++) {
        const double *ns = results->capture_ns[d];
        double ucontext_ns = results->capture_ucontext_ns[d];
        char cells[CONTENDER_COUNT + 1][32];
        for (int c = 0; c <= CONTENDER_COUNT; c++) {
            double value = c < CONTENDER_COUNT ? ns[c] : ucontext_ns;
            snprintf(cells[c], sizeof cells[c], "%.0f (%.1f)", value, value / capture_depths[d]);
        }
        printf("   %-6d %20s %20s %20s %20s %11.3fx %11.3fx %11.3fx\n", capture_depths[d],
               cells[OURS], cells[GLIBC], cells[LIBUNWIND], cells[CONTENDER_COUNT],
               ns[OURS] / ns[GLIBC], ns[LIBUNWIND] / ns[GLIBC], ns[OURS] / ns[LIBUNWIND]);
    }
}
