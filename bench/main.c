/* main.c: build/bench/bench, run by `make bench`.
 *
 * Runs the seven parts in one process (and the fresh processes that parts
 * 2, 3, 6 and 7 spawn), each printing its table, then the summary against the
 * performance targets. Benchmarks, not tests: a missed target is printed,
 * and the exit status is 0 all the same; only a broken setup (the wrong
 * backtrace bound, a wrong frame count) stops the run with status 1. */
#include "bench.h"

#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const contender_names[CONTENDER_COUNT] = { "ours", "glibc", "libunwind" };

void bench_fail(const char *format, ...)
{
    va_list arguments;

    fflush(stdout);
    fprintf(stderr, "bench: setup error: ");
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fprintf(stderr, "\n");
    exit(1);
}

static const char *duration(double ns, char *text, size_t size)
{
    if (ns < 10000)
        snprintf(text, size, "%.0f ns", ns);
    else if (ns < 10000000)
        snprintf(text, size, "%.1f us", ns / 1e3);
    else
        snprintf(text, size, "%.1f ms", ns / 1e6);
    return text;
}

static int summary_row(const char *what, double ours, double theirs, double target)
{
    char a[32], b[32];
    double ratio = ours / theirs;
    int met = ratio <= target;

    printf("   %-36s %10s %10s %8.3fx  <= %.2fx  %s\n", what, duration(ours, a, sizeof a),
           duration(theirs, b, sizeof b), ratio, target, met ? "yes" : "NO");
    return met;
}

/* A target that is an absolute bound, not a ratio to glibc. */
static int absolute_row(const char *what, double ours, double bound_ns, const char *bound)
{
    char a[32];
    int met = ours < bound_ns;

    if (ours >= 1e6)
        snprintf(a, sizeof a, "%.2f ms", ours / 1e6);
    else
        duration(ours, a, sizeof a);
    printf("   %-36s %10s %10s %9s  < %-6s  %s\n", what, a, "-", "", bound, met ? "yes" : "NO");
    return met;
}

int main(void)
{
    static struct results results;

    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("execinfo_ex benchmarks: ours vs glibc %s (dlsym) vs libunwind; %ld CPUs\n",
           gnu_get_libc_version(), sysconf(_SC_NPROCESSORS_ONLN));
    printf("Medians of repeated, interleaved runs. Timings are reported, never asserted.\n");
    glibc_open();
    /* BENCH_ONLY=handler: part 7 alone (bench/handler.c), no summary. */
    const char *only = getenv("BENCH_ONLY");
    if (only != NULL && strcmp(only, "handler") == 0) {
        bench_handler(&results);
        return 0;
    }

    bench_capture(&results);
    bench_capture_memo(&results);
    bench_first_call(&results);
    bench_symbols(&results);
    bench_index_cost(&results);
    bench_handler(&results);

    printf("\nSummary against the targets\n\n");
    printf("   %-36s %10s %10s %9s  %-8s  %s\n", "", "ours", "glibc", "ratio", "target", "met");
    int met = 0, total = 0;
    met += summary_row("warm capture, 30 frames", results.capture_ns[1][OURS],
                       results.capture_ns[1][GLIBC], 0.2);
    met += summary_row("first backtrace call, 30 frames", results.first_ns[OURS],
                       results.first_ns[GLIBC], 1.0);
    int no_allocation = results.first_allocations[OURS] == 0;
    printf("   %-36s %10.0f %10.0f %9s  %-8s  %s\n", "first call: allocations",
           results.first_allocations[OURS], results.first_allocations[GLIBC], "", "0",
           no_allocation ? "yes" : "NO");
    met += no_allocation;
    met += summary_row("backtrace_symbols warm, 30 frames", results.symbols_warm_ns[OURS],
                       results.symbols_warm_ns[GLIBC], 1.0);
    met += summary_row("backtrace_symbols_fd, 30 frames", results.symbols_fd_ns[OURS],
                       results.symbols_fd_ns[GLIBC], 0.25);
    total = 5;
    printf("\n   against libunwind's cached unw_backtrace (issue 23; the second column is libunwind):\n");
    met += summary_row("backtrace, 30 frames", results.capture_ns[1][OURS],
                       results.capture_ns[1][LIBUNWIND], 1.0);
    met += summary_row("backtrace_ucontext, 30 frames", results.capture_ucontext_ns[1],
                       results.capture_ns[1][LIBUNWIND], 1.0);
    total += 2;
    printf("\n   fatal-signal handler (issue 3):\n");
    met += absolute_row("fault to end of report, text", results.handler_report_ns[0],
                        10e6, "10 ms");
    met += absolute_row("fault to end of report, json", results.handler_report_ns[1],
                        10e6, "10 ms");
    met += absolute_row("install, 10 libraries: load + call", results.handler_load_cost_ns +
                        results.handler_install_ns, 5e6, "5 ms");
    total += 3;
    printf("   (part 7: the first two are t0 before the faulting write to t1 in the\n"
           "   crash callback, 30 frames in 6 modules, on the main thread (%.1f us in a\n"
           "   thread created after the install); the third is exec-to-main with\n"
           "   our library minus without, %.2f ms, mostly the index build, plus the\n"
           "   install call, %.1f us; %.2f ms in all without separate debug files.\n"
           "   Memory, no target: alternate stack %.0f KiB of address space a thread,\n"
           "   index %.0f KiB, VmRSS %+.0f KiB against a program without our library)\n",
           results.handler_thread_report_ns / 1e3, results.handler_load_cost_ns / 1e6,
           results.handler_install_ns / 1e3, results.handler_no_debug_ns / 1e6,
           results.handler_thread_bytes / 1024, results.handler_index_bytes / 1024,
           results.handler_rss_delta_kib);
    printf("\n   %d of %d targets met.\n", met, total);
    printf("   Not in the targets: ours builds its index when the library is loaded,\n"
           "   %.2f ms with the default lines=own (part 6), so a whole fresh process that\n"
           "   takes one trace runs %.2f ms with ours, %.2f ms with glibc (part 2).\n",
           results.index[0].load_ns / 1e6, results.first_process_ns[OURS] / 1e6,
           results.first_process_ns[GLIBC] / 1e6);
    return 0;
}
