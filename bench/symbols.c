/* symbols.c: symbolizing 30 frames, warm (parts 3, 4 and 5).
 *
 * The trace is a real one of exactly 30 frames: mostly this program's own
 * functions (static, no -rdynamic, so glibc can only print them as
 * exe(+0xoffset) while we name them) and libc's start-up frames. Output
 * goes to /dev/null, so that we time the library and one cheap write
 * syscall, not a terminal. */
#define _GNU_SOURCE
#include "bench.h"
#include "timing.h"

#include <execinfo_ex.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define REPETITIONS 101
#define BATCH_NS 2000000

static void *trace[SYMBOL_FRAMES];
static int out_fd;
static volatile long sink;

/* ---- reaching an exact stack depth ---- */

/* Recurse until AT, called from here, sees exactly WANT frames (itself
 * first, _start last). noinline and not a tail call: one frame a level. */
__attribute__((noinline)) static void reach(int want, void (*at)(void))
{
    void *probe[128];
    int depth = backtrace(probe, 128);

    if (depth + 1 == want)
        at();
    else if (depth + 1 > want)
        bench_fail("the stack is already %d frames deep, more than %d", depth + 1, want);
    else
        reach(want, at);
    __asm__ volatile("" ::: "memory");
}

static void capture_trace(void)
{
    void *frames[64];
    int count = backtrace(frames, 64);

    if (count != SYMBOL_FRAMES)
        bench_fail("captured %d frames, not %d", count, SYMBOL_FRAMES);
    memcpy(trace, frames, sizeof trace);
}

/* ---- part 3: backtrace_symbols, part 4: backtrace_symbols_fd ---- */

static void batch_symbols_ours(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        char **strings = backtrace_symbols(trace, SYMBOL_FRAMES);
        sink += strings[SYMBOL_FRAMES - 1][0];
        free(strings);
    }
}

static void batch_symbols_glibc(long iterations)
{
    for (long i = 0; i < iterations; i++) {
        char **strings = glibc.backtrace_symbols(trace, SYMBOL_FRAMES);
        sink += strings[SYMBOL_FRAMES - 1][0];
        free(strings);
    }
}

static void batch_fd_ours(long iterations)
{
    for (long i = 0; i < iterations; i++)
        backtrace_symbols_fd(trace, SYMBOL_FRAMES, out_fd);
}

static void batch_fd_glibc(long iterations)
{
    for (long i = 0; i < iterations; i++)
        glibc.backtrace_symbols_fd(trace, SYMBOL_FRAMES, out_fd);
}

/* ---- part 5: print_trace_fd and its references ---- */

/* The depth each capturing batch ran at, checked after the measurement.
 * One backtrace per batch of ~2 ms: noise far below the medians' spread. */
static int observed_depth[3];

static void batch_print_trace(long iterations)
{
    void *probe[64];
    observed_depth[0] = backtrace(probe, 64);
    for (long i = 0; i < iterations; i++)
        print_trace_fd(out_fd);
}

static void batch_print_fd(long iterations)
{
    for (long i = 0; i < iterations; i++)
        backtrace_print_fd(trace, SYMBOL_FRAMES, 0, out_fd);
}

static void batch_capture_fd_ours(long iterations)
{
    void *frames[SYMBOL_FRAMES], *probe[64];
    observed_depth[1] = backtrace(probe, 64);
    for (long i = 0; i < iterations; i++)
        backtrace_symbols_fd(frames, backtrace(frames, SYMBOL_FRAMES), out_fd);
}

static void batch_capture_fd_glibc(long iterations)
{
    void *frames[SYMBOL_FRAMES], *probe[64];
    observed_depth[2] = backtrace(probe, 64);
    for (long i = 0; i < iterations; i++)
        glibc.backtrace_symbols_fd(frames, glibc.backtrace(frames, SYMBOL_FRAMES), out_fd);
}

static double print_ns[4];

/* Runs at depth 28, so measure_interleaved runs at 29 and the batches at
 * exactly SYMBOL_FRAMES. */
static void measure_print(void)
{
    static const struct contender contenders[4] = {
        { "print_trace_fd", batch_print_trace },
        { "backtrace_print_fd", batch_print_fd },
        { "ours backtrace + backtrace_symbols_fd", batch_capture_fd_ours },
        { "glibc backtrace + backtrace_symbols_fd", batch_capture_fd_glibc },
    };
    measure_interleaved(contenders, 4, bench_count(REPETITIONS), BATCH_NS, print_ns);
    __asm__ volatile("" ::: "memory");
}

/* print_trace_fd writes "Obtained N stack frames." with N the frames of
 * its caller, which is what backtrace counts from the same caller. Shows
 * the first frame line too, with its file:line. */
__attribute__((noinline)) static void check_print_trace(void)
{
    void *frames[128];
    char text[4096];
    int fd = memfd_create("print_trace", 0);
    int expected = backtrace(frames, 128);
    print_trace_fd(fd);
    ssize_t length = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    text[length > 0 ? length : 0] = '\0';
    int obtained = -1;
    if (sscanf(text, "Obtained %d stack frames.", &obtained) != 1 || obtained != expected)
        bench_fail("print_trace_fd said %d frames, backtrace %d:\n%s", obtained, expected, text);
    char *first = strchr(text, '\n');
    char *end = first ? strchr(first + 1, '\n') : NULL;
    if (end != NULL)
        printf("   print_trace_fd frame 0: %.*s\n", (int)(end - first - 1), first + 1);
}

static void show_first_frames(void)
{
    char **ours = backtrace_symbols(trace, 1), **theirs = glibc.backtrace_symbols(trace, 1);
    printf("   frame 0, ours:  %s\n   frame 0, glibc: %s\n", ours[0], theirs[0]);
    free(ours);
    free(theirs);
}

void bench_symbols(struct results *results)
{
    static const struct contender symbols[2] = {
        { "ours", batch_symbols_ours }, { "glibc", batch_symbols_glibc }
    };
    static const struct contender symbols_fd[2] = {
        { "ours", batch_fd_ours }, { "glibc", batch_fd_glibc }
    };

    out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (out_fd < 0)
        bench_fail("open /dev/null");
    reach(SYMBOL_FRAMES, capture_trace);

    measure_interleaved(symbols, 2, bench_count(REPETITIONS), BATCH_NS, results->symbols_warm_ns);
    measure_interleaved(symbols_fd, 2, bench_count(REPETITIONS), BATCH_NS, results->symbols_fd_ns);
    reach(SYMBOL_FRAMES - 2, measure_print);
    for (int i = 0; i < 3; i++)
        if (observed_depth[i] != SYMBOL_FRAMES)
            bench_fail("part 5 batch %d ran at %d frames, not %d", i, observed_depth[i],
                       SYMBOL_FRAMES);
    results->print_trace_fd_ns = print_ns[0];
    results->print_fd_ns = print_ns[1];
    results->ours_capture_fd_ns = print_ns[2];
    results->glibc_capture_fd_ns = print_ns[3];

    printf("\n3b. backtrace_symbols, %d frames, warm (result freed each time)\n",
           SYMBOL_FRAMES);
    printf("   median of %d interleaved batches of ~2 ms\n", bench_count(REPETITIONS));
    show_first_frames();
    printf("\n   %-10s %12s %12s %12s\n", "", "ns/call", "ns/frame", "vs glibc");
    for (int c = OURS; c <= GLIBC; c++)
        printf("   %-10s %12.0f %12.1f %11.3fx\n", contender_names[c],
               results->symbols_warm_ns[c], results->symbols_warm_ns[c] / SYMBOL_FRAMES,
               results->symbols_warm_ns[c] / results->symbols_warm_ns[GLIBC]);

    printf("\n4. backtrace_symbols_fd, %d frames, to /dev/null\n\n", SYMBOL_FRAMES);
    printf("   %-10s %12s %12s %12s\n", "", "ns/call", "ns/frame", "vs glibc");
    for (int c = OURS; c <= GLIBC; c++)
        printf("   %-10s %12.0f %12.1f %11.3fx\n", contender_names[c], results->symbols_fd_ns[c],
               results->symbols_fd_ns[c] / SYMBOL_FRAMES,
               results->symbols_fd_ns[c] / results->symbols_fd_ns[GLIBC]);

    printf("\n5. print_trace_fd (capture + names + file:line), %d frames, to /dev/null\n",
           SYMBOL_FRAMES);
    printf("   (lines=main: file:line for this program's frames; no glibc counterpart,\n"
           "   glibc's backtrace + backtrace_symbols_fd shown as a reference)\n");
    check_print_trace();
    static const char *const rows[4] = {
        "print_trace_fd", "backtrace_print_fd (given 30 frames)",
        "ours: backtrace + backtrace_symbols_fd", "ref, glibc: backtrace + backtrace_symbols_fd"
    };
    printf("\n   %-44s %12s %12s\n", "", "ns/call", "vs ref");
    for (int i = 0; i < 4; i++)
        printf("   %-44s %12.0f %11.3fx\n", rows[i], print_ns[i], print_ns[i] / print_ns[3]);
}
