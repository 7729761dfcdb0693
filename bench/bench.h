/* bench.h: the parts of build/bench/bench and what they hand to the summary.
 *
 * Each part prints its own table as it goes and stores the numbers the
 * final summary needs in struct results. Nothing here asserts a timing:
 * a setup that is wrong (not our backtrace, wrong frame count) stops the
 * run, a slow number is only printed. */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stddef.h>

/* glibc's own functions. Our library defines the same names and comes
 * first in the link, so the plain names are ours; glibc's are reached
 * through dlopen("libc.so.6") + dlsym. */
struct glibc_api {
    int (*backtrace)(void **buffer, int size);
    char **(*backtrace_symbols)(void *const *buffer, int size);
    void (*backtrace_symbols_fd)(void *const *buffer, int size, int fd);
};
extern struct glibc_api glibc;
void glibc_open(void);

/* Stop the run: the benchmark setup is not what the tables would claim. */
void bench_fail(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Run the helper PATH (argv ARGV, extra environment ENV or NULL) in a fresh
 * process and store up to CAPACITY - 1 bytes of its standard output in
 * OUTPUT. Fails the run if the helper does not exit 0. */
size_t bench_read_all(int fd, char *output, size_t capacity);
void spawn_helper(const char *path, char *const argv[], const char *env, char *output,
                  size_t capacity);
/* The directory of the running executable, where the helpers are. */
const char *bench_directory(void);

enum { OURS, GLIBC, LIBUNWIND, CONTENDER_COUNT };
extern const char *const contender_names[CONTENDER_COUNT];

#define CAPTURE_DEPTHS 3
extern const int capture_depths[CAPTURE_DEPTHS];

struct index_figures {
    double load_ns;       /* cold build, in the library's constructor */
    double rebuild_ns;    /* index_build_now() with module data cached */
    double modules, symbols, lines, mapped_bytes;
};

struct results {
    /* 1. warm capture: ns per call, [depth][contender] */
    double capture_ns[CAPTURE_DEPTHS][CONTENDER_COUNT];
    /* ... and our backtrace_ucontext, from a getcontext of the batch */
    double capture_ucontext_ns[CAPTURE_DEPTHS];
    /* 1b. warm capture through backtrace_skip_range: no memo, memo with
     * the same stack, memo with two alternating paths */
    double memo_ns[CAPTURE_DEPTHS][3];
    /* 2. first backtrace call in a fresh process */
    double first_ns[CONTENDER_COUNT];
    double first_allocations[CONTENDER_COUNT];
    double first_process_ns[CONTENDER_COUNT]; /* fork to exit of the helper */
    /* 3. backtrace_symbols of 30 frames */
    double symbols_cold_ns[2], symbols_cold_allocations[2]; /* OURS, GLIBC */
    double symbols_warm_ns[2];
    /* 4. backtrace_symbols_fd of 30 frames to /dev/null */
    double symbols_fd_ns[2];
    /* 5. print_trace_fd and friends, 30 frames, to /dev/null */
    double print_trace_fd_ns, print_fd_ns, ours_capture_fd_ns, glibc_capture_fd_ns;
    /* 6. the symbol index: lines=own (default), lines=all, lines=none */
    struct index_figures index[3];
    /* 7. the fatal-signal handler (issue 3) */
    double handler_report_ns[2];      /* fault to end of report: text, json */
    double handler_thread_report_ns;  /* fault to end of report, text, in a new thread */
    double handler_reaped_ns[4];      /* fault to reaped: text, json, thread, no handler */
    double handler_load_cost_ns;      /* exec to main, ours minus without (10 libraries) */
    double handler_install_ns;        /* backtrace_install_fatal_handler(NULL) */
    double handler_no_debug_ns;       /* load cost + install, no separate debug files */
    double handler_thread_bytes;      /* alternate stack mapping of a new thread */
    double handler_index_bytes;       /* the index of the 10-library program */
    double handler_rss_delta_kib;     /* VmRSS, ours minus without */
};

void bench_capture(struct results *results);
void bench_capture_memo(struct results *results);
void bench_first_call(struct results *results);
void bench_symbols(struct results *results);
void bench_index_cost(struct results *results);
void bench_handler(struct results *results);

/* Frames of every trace symbolized by parts 3 to 5. */
#define SYMBOL_FRAMES 30

#endif
