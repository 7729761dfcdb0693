/* capture_memo.c: part 1b, what a struct backtrace_memo saves. The same
 * captures as part 1 (N frames out of a deeper stack), through
 * backtrace_skip_range without a memo, with a memo from a stack that is
 * the same at every call (a loop allocating in one place), and with a memo
 * while the innermost frames alternate between two call paths (what an
 * allocator sees: the memo must find where the stacks meet again).
 *
 * The three contenders capture the same frames; the count is checked, and
 * so is the trace: equal with and without the memo. */
#include "bench.h"
#include "timing.h"

#include <execinfo_ex.h>
#include <stdio.h>
#include <string.h>

#define STACK_LEVELS 110
#define REPETITIONS 101
#define BATCH_NS 1000000

static void *frames[128], *reference[128];
static int depth;
static volatile int sink;
static struct backtrace_memo memo_same, memo_alternating;

__attribute__((noinline)) static int capture_plain(void)
{
    int count = backtrace_skip_range(frames, depth, NULL, NULL, NULL);
    __asm__ volatile("" ::: "memory");
    return count;
}

__attribute__((noinline)) static int capture_same(void)
{
    int count = backtrace_skip_range(frames, depth, NULL, NULL, &memo_same);
    __asm__ volatile("" ::: "memory");
    return count;
}

/* Two paths of different depth down to the capture. */
__attribute__((noinline)) static int capture_alternating_leaf(void)
{
    int count = backtrace_skip_range(frames, depth, NULL, NULL, &memo_alternating);
    __asm__ volatile("" ::: "memory");
    return count;
}

__attribute__((noinline)) static int capture_alternating_middle(void)
{
    int count = capture_alternating_leaf();
    __asm__ volatile("" ::: "memory");
    return count;
}

static void batch_plain(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += capture_plain();
}

static void batch_same(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += capture_same();
}

static void batch_alternating(long iterations)
{
    for (long i = 0; i < iterations; i++)
        sink += (i & 1) ? capture_alternating_middle() : capture_alternating_leaf();
}

static void check_traces(void)
{
    if (capture_plain() != depth)
        bench_fail("memo part: the plain capture has not %d frames", depth);
    memcpy(reference, frames, sizeof frames);
    for (int round = 0; round < 3; round++) {
        /* Frames 0 and 1 are call sites of the two functions and of this
         * one; from frame 2 on, the stack is the same. */
        if (capture_same() != depth || memcmp(frames + 2, reference + 2,
                                              (size_t)(depth - 2) * sizeof *frames) != 0)
            bench_fail("memo part: a capture with a memo differs from one without");
    }
    for (int round = 0; round < 4; round++) {
        int count = (round & 1) ? capture_alternating_middle() : capture_alternating_leaf();
        if (count != depth)
            bench_fail("memo part: an alternating capture has %d frames, not %d", count, depth);
    }
}

static void measure_at_bottom(struct results *results)
{
    static const struct contender contenders[3] = {
        { "no memo", batch_plain },
        { "memo, same stack", batch_same },
        { "memo, two paths", batch_alternating },
    };
    for (int d = 0; d < CAPTURE_DEPTHS; d++) {
        depth = capture_depths[d];
        check_traces();
        measure_interleaved(contenders, 3, bench_count(REPETITIONS), BATCH_NS, results->memo_ns[d]);
    }
}

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

void bench_capture_memo(struct results *results)
{
    printf("\n1b. Warm capture with a memo (backtrace_skip_range)\n");
    printf("   median of %d interleaved batches of ~%d ms; ns per call (ns per frame)\n\n",
           bench_count(REPETITIONS), BATCH_NS / 1000000);
    descend(STACK_LEVELS, results);
    printf("   %-6s %20s %20s %20s %12s %12s\n", "frames", "no memo", "memo, same stack",
           "memo, two paths", "same/none", "two/none");
    for (int d = 0; d < CAPTURE_DEPTHS; d++) {
        const double *ns = results->memo_ns[d];
        char cells[3][32];
        for (int c = 0; c < 3; c++)
            snprintf(cells[c], sizeof cells[c], "%.0f (%.1f)", ns[c], ns[c] / capture_depths[d]);
        printf("   %-6d %20s %20s %20s %11.3fx %11.3fx\n", capture_depths[d], cells[0], cells[1],
               cells[2], ns[1] / ns[0], ns[2] / ns[0]);
    }
}
