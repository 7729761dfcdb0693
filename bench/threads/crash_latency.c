/* crash_latency.c: how long issue 23's every-thread report takes, from the
 * fault to the end of the report, with 1, 16, 256 and 1,000 threads, and
 * beside it eu-stack and gdb dumping the same kind of process from
 * outside. A benchmark, not a test: it prints tables and asserts no
 * timing (a setup that is wrong, such as a child that does not die by
 * SIGSEGV, stops the run).
 *
 * Every sample is a fresh process of crash_latency_helper (N threads, the
 * N - 1 extra ones three frames deep in pthread_cond_wait, 64 KiB stacks;
 * crash_latency_helper.c), with the handler installed, the report going to
 * a file in a scratch directory:
 *
 *   crash, threads=1024 / threads=1   main faults three frames deep.
 *       "callback": t0, stamped in the shared page just before the
 *       faulting write, to t1, stamped first thing in the crash callback
 *       (after the report's body, before its end line). "reaped": t0 to
 *       this process's waitpid returning (the end line, the re-raise, the
 *       death of N threads, the parent's wakeup).
 *   crash + minidump=DIR   the same with minidump= added to the options,
 *       when the library knows the option (a probe: install with
 *       "minidump=/tmp" must not return -1); else the rows say
 *       "minidump: not available in this build". THE HOOK: -M DIR (or
 *       BENCH_MINIDUMP_DIR) sets minidump_dir below; by default a
 *       directory in the scratch directory.
 *   dump, threads=1024 / threads=1   the same process alive (every thread
 *       waiting, main too, in the same frames), dump_signal=USR1: from
 *       kill(SIGUSR1) to the report file's close (inotify IN_CLOSE_WRITE:
 *       the report is opened and closed per report, after the end line).
 *       The first dump in that process, like the crash's gathering.
 *   eu-stack -p PID, gdb -p PID -batch -ex 'thread apply all bt'   on the
 *       same live process (handler installed with threads=1024, never
 *       asked): fork to the tool's exit, output to /dev/null. gdb runs
 *       with -nx -iex 'set auto-load off'; DEBUGINFOD_URLS is unset for
 *       both, so that neither goes to the network.
 *
 * Each repetition runs every row once, in an order that rotates
 * (timing.h explains why); the tables give medians. The tools take
 * seconds at 1,000 threads, so they run in the first -R repetitions only.
 * The whole run is pinned to one CPU (BENCH_CPU, else the first allowed;
 * children and the tools inherit it), core dumps off (RLIMIT_CORE 0).
 * Before the timed runs, each N is checked once: the reports list every
 * thread with frames and end with the end line, eu-stack and gdb list
 * every thread.
 *
 * -W is a diagnostic, not the benchmark: every extra thread calls
 * backtrace() once before it waits (BENCH_PREWALK=1 for the helper), so
 * that the walker knows its stack mapping before the request comes and
 * does not look it up in /proc/self/maps in the request's handler.
 *
 *   crash_latency [-r REPETITIONS] [-R TOOL_REPETITIONS] [-n 1,16,256,1000]
 *                 [-M MINIDUMP_DIR] [-T (no eu-stack/gdb)] [-W] */
#define _GNU_SOURCE
#include "crowd_page.h"
#include "../timing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_COUNTS 8
#define MAX_REPS 101
#define CAP_OPTION "threads=1024"

enum row {
    CRASH_ALL, CRASH_ONE, MINI_ALL, MINI_ONE, DUMP_ALL, DUMP_ONE, EU_STACK, GDB, ROWS
};
static const char *const row_names[ROWS] = {
    "crash, threads=1024", "crash, threads=1", "crash + minidump, threads=1024",
    "crash + minidump, threads=1", "dump (USR1), threads=1024", "dump (USR1), threads=1",
    "eu-stack -p", "gdb thread apply all bt",
};

/* THE MINIDUMP HOOK: the directory given to minidump= in the minidump
 * rows (-M DIR or BENCH_MINIDUMP_DIR; default: SCRATCH/minidumps). The
 * rows run only if the library accepts "minidump=/tmp". */
static const char *minidump_dir;
static int minidump_available;

static char helper[PATH_MAX], scratch[PATH_MAX];
static struct crowd_page *page;
static int page_fd, watch_fd;
static int tools = 1;

static void fail(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    fprintf(stderr, "crash_latency: setup error: ");
    vfprintf(stderr, format, arguments);
    fprintf(stderr, "\n");
    va_end(arguments);
    exit(1);
}

/* Ours, less EXECINFO_EX_OPTIONS, LD_PRELOAD and DEBUGINFOD_URLS. */
static char **child_environment(void)
{
    static char *list[512];
    size_t count = 0;
    for (char **entry = environ; *entry != NULL && count < 510; entry++)
        if (strncmp(*entry, "EXECINFO_EX_OPTIONS=", 20) != 0 &&
            strncmp(*entry, "LD_PRELOAD=", 11) != 0 &&
            strncmp(*entry, "DEBUGINFOD_URLS=", 16) != 0)
            list[count++] = *entry;
    list[count] = NULL;
    return list;
}

/* Fork and exec ARGV with stdout to OUT_FD (or /dev/null if < 0), stderr
 * to /dev/null, core dumps off. */
static pid_t start(char *const argv[], int out_fd)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        struct rlimit no_core = { 0, 0 };
        setrlimit(RLIMIT_CORE, &no_core);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(out_fd >= 0 ? out_fd : null, 1);
        dup2(null, 2);
        if (out_fd > 2)
            close(out_fd);
        close(null);
        execve(argv[0], argv, child_environment());
        execvpe(argv[0], argv, child_environment());
        _exit(127);
    }
    return pid;
}

static int reap(pid_t pid, uint64_t *reaped_ns)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            fail("waitpid: %s", strerror(errno));
    if (reaped_ns != NULL)
        *reaped_ns = now_ns();
    return status;
}

static pid_t start_helper(const char *mode, int threads, const char *options)
{
    char fd_text[16], count_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", page_fd);
    snprintf(count_text, sizeof count_text, "%d", threads);
    char *argv[] = { helper, fd_text, (char *)mode, count_text, (char *)options, NULL };
    memset(page, 0, sizeof *page);
    return start(argv, -1);
}

static void wait_ready(pid_t pid)
{
    for (int waited = 0; __atomic_load_n(&page->ready, __ATOMIC_ACQUIRE) == 0; waited++) {
        struct timespec tick = { 0, 100 * 1000 * 1000 };
        syscall(SYS_futex, &page->ready, FUTEX_WAIT, 0, &tick, NULL, 0);
        if (waited > 600)
            fail("the helper (pid %d) was not ready within a minute", (int)pid);
    }
    if (page->ready != 1)
        fail("the helper's setup failed (status %d)", page->status);
}

static void path_in_scratch(char *path, size_t size, const char *name)
{
    if ((size_t)snprintf(path, size, "%s/%s", scratch, name) >= size)
        fail("path too long: %s/%s", scratch, name);
}

/* Report options of ROW for the helper. */
static void row_options(enum row row, char *options, size_t size)
{
    char report[PATH_MAX + 16];
    int one = row == CRASH_ONE || row == MINI_ONE || row == DUMP_ONE;
    const char *cap = one ? "threads=1" : CAP_OPTION;
    if (row == DUMP_ALL || row == DUMP_ONE) {
        path_in_scratch(report, sizeof report, "dump.txt");
        snprintf(options, size, "%s:dump_signal=USR1:report=%s", cap, report);
    } else if (row == EU_STACK || row == GDB) {
        path_in_scratch(report, sizeof report, "unused.txt");
        snprintf(options, size, "%s:report=%s", CAP_OPTION, report);
    } else {
        path_in_scratch(report, sizeof report, "crash.txt");
        snprintf(options, size, "%s:report=%s%s%s", cap, report,
                 row == MINI_ALL || row == MINI_ONE ? ":minidump=" : "",
                 row == MINI_ALL || row == MINI_ONE ? minidump_dir : "");
    }
}

struct sample {
    double main_ns;     /* callback (crash), kill to close (dump), tool run */
    double reaped_ns;   /* crash: t0 to reaped */
    int missing;        /* crash, dump: other threads listed without frames */
};

static int count_lines(const char *path, const char *prefix, const char *containing,
                       long *bytes, int *has_end);

/* Other threads of the report NAME without frames (or not listed at all),
 * read after the sample's times were taken. */
static int missing_threads(const char *name, int threads)
{
    char path[PATH_MAX];
    path_in_scratch(path, sizeof path, name);
    int walked = count_lines(path, "*** thread ", "frames:", NULL, NULL);
    return walked < 0 ? threads - 1 : threads - 1 - walked;
}

static void remove_report(const char *name)
{
    char path[PATH_MAX];
    path_in_scratch(path, sizeof path, name);
    unlink(path);
}

static void empty_minidumps(void)
{
    DIR *directory = opendir(minidump_dir);
    struct dirent *entry;
    if (directory == NULL)
        return;
    while ((entry = readdir(directory)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", minidump_dir, entry->d_name);
        unlink(path);
    }
    closedir(directory);
}

static long minidump_bytes(void)
{
    DIR *directory = opendir(minidump_dir);
    struct dirent *entry;
    long total = 0;
    if (directory == NULL)
        return -1;
    while ((entry = readdir(directory)) != NULL) {
        struct stat info;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", minidump_dir, entry->d_name);
        if (entry->d_name[0] != '.' && stat(path, &info) == 0)
            total += info.st_size;
    }
    closedir(directory);
    return total;
}

static struct sample run_crash(enum row row, int threads)
{
    char options[3 * PATH_MAX];
    uint64_t reaped;
    struct sample result;
    row_options(row, options, sizeof options);
    remove_report("crash.txt");
    pid_t pid = start_helper("crash", threads, options);
    int status = reap(pid, &reaped);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
        fail("%s, %d threads: the helper did not die by SIGSEGV (status %#x, setup %d)",
             row_names[row], threads, status, page->status);
    if (page->callback_calls != 1 || page->fault_ns == 0)
        fail("%s, %d threads: the crash callback ran %d times", row_names[row], threads,
             page->callback_calls);
    result.main_ns = (double)(page->callback_ns - page->fault_ns);
    result.reaped_ns = (double)(reaped - page->fault_ns);
    result.missing = row == CRASH_ONE || row == MINI_ONE ? 0 : missing_threads("crash.txt", threads);
    return result;
}

/* Wait for IN_CLOSE_WRITE of NAME in the scratch directory; its time. */
static uint64_t wait_closed(const char *name)
{
    char buffer[4096] __attribute__((aligned(8)));
    for (;;) {
        struct pollfd poll_fd = { watch_fd, POLLIN, 0 };
        if (poll(&poll_fd, 1, 30000) <= 0)
            fail("no report %s within 30 s", name);
        ssize_t got = read(watch_fd, buffer, sizeof buffer);
        uint64_t when = now_ns();
        for (ssize_t at = 0; at < got;) {
            struct inotify_event *event = (struct inotify_event *)(buffer + at);
            if (event->len > 0 && strcmp(event->name, name) == 0)
                return when;
            at += (ssize_t)(sizeof *event + event->len);
        }
    }
}

static void drain_watch(void)
{
    char buffer[4096] __attribute__((aligned(8)));
    while (read(watch_fd, buffer, sizeof buffer) > 0) {
    }
}

static double run_tool(enum row row, pid_t target, char *output_path)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)target);
    char *eu_stack[] = { "eu-stack", "-p", pid_text, NULL };
    char *gdb[] = { "gdb", "-nx", "-iex", "set auto-load off", "-batch", "-p", pid_text,
                    "-ex", "thread apply all bt", NULL };
    int out_fd = -1;
    if (output_path != NULL) {
        out_fd = open(output_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out_fd < 0)
            fail("%s: %s", output_path, strerror(errno));
    }
    uint64_t before = now_ns();
    pid_t pid = start(row == GDB ? gdb : eu_stack, out_fd);
    uint64_t after;
    int status = reap(pid, &after);
    if (out_fd >= 0)
        close(out_fd);
    if (!WIFEXITED(status) || (row == EU_STACK && WEXITSTATUS(status) != 0))
        fail("%s on pid %d: status %#x", row_names[row], (int)target, status);
    return (double)(after - before);
}

/* A live helper of THREADS threads, then the dump or the tool. */
static struct sample run_live(enum row row, int threads, char *tool_output)
{
    char options[3 * PATH_MAX];
    struct sample result = { 0, 0, 0 };
    row_options(row, options, sizeof options);
    remove_report("dump.txt");
    pid_t pid = start_helper("live", threads, options);
    wait_ready(pid);
    if (row == DUMP_ALL || row == DUMP_ONE) {
        drain_watch();
        uint64_t before = now_ns();
        kill(pid, SIGUSR1);
        result.main_ns = (double)(wait_closed("dump.txt") - before);
        if (row == DUMP_ALL)
            result.missing = missing_threads("dump.txt", threads);
    } else {
        result.main_ns = run_tool(row, pid, tool_output);
    }
    kill(pid, SIGKILL);
    reap(pid, NULL);
    return result;
}

static struct sample run_row(enum row row, int threads, char *tool_output)
{
    if (row == DUMP_ALL || row == DUMP_ONE || row == EU_STACK || row == GDB)
        return run_live(row, threads, tool_output);
    if (row == MINI_ALL || row == MINI_ONE)
        empty_minidumps();
    return run_crash(row, threads);
}

/* Count the lines of PATH that start with PREFIX; *BYTES its size. */
static int count_lines(const char *path, const char *prefix, const char *containing,
                       long *bytes, int *has_end)
{
    if (bytes != NULL)
        *bytes = 0;
    FILE *file = fopen(path, "r");
    char line[8192];
    int count = 0;
    if (file == NULL)
        return -1;
    if (has_end != NULL)
        *has_end = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        if (strncmp(line, prefix, strlen(prefix)) == 0 &&
            (containing == NULL || strstr(line, containing) != NULL))
            count++;
        if (has_end != NULL && strncmp(line, "*** end of report", 17) == 0)
            *has_end = 1;
    }
    if (bytes != NULL)
        *bytes = ftell(file);
    fclose(file);
    return count;
}

/* One untimed run of each row for THREADS, and what it wrote. */
static void check(int threads)
{
    char path[PATH_MAX];
    long bytes;
    int end, listed, walked;
    printf("- %d threads:", threads);
    run_row(CRASH_ALL, threads, NULL);
    path_in_scratch(path, sizeof path, "crash.txt");
    listed = count_lines(path, "*** thread ", NULL, &bytes, &end);
    walked = count_lines(path, "*** thread ", "frames:", NULL, NULL);
    printf(" crash report %ld bytes, %d other threads listed, %d with frames%s%s;", bytes, listed,
           walked, end ? ", end line" : ", NO END LINE",
           listed != threads - 1 || walked != threads - 1 ? " (INCOMPLETE)" : "");
    if (!end)
        fail("the crash report of %d threads has no end line (%s)", threads, path);
    run_row(DUMP_ALL, threads, NULL);
    path_in_scratch(path, sizeof path, "dump.txt");
    listed = count_lines(path, "*** thread ", NULL, &bytes, &end);
    walked = count_lines(path, "*** thread ", "frames:", NULL, NULL);
    printf(" dump %ld bytes, %d other threads, %d with frames%s;", bytes, listed, walked,
           listed != threads - 1 || walked != threads - 1 ? " (INCOMPLETE)" : "");
    if (!end)
        fail("the dump of %d threads has no end line (%s)", threads, path);
    if (minidump_available) {
        run_row(MINI_ALL, threads, NULL);
        printf(" minidump %ld bytes;", minidump_bytes());
    }
    if (tools) {
        path_in_scratch(path, sizeof path, "tool.txt");
        run_row(EU_STACK, threads, path);
        listed = count_lines(path, "TID ", NULL, &bytes, NULL);
        printf(" eu-stack %d threads, %ld bytes;", listed, bytes);
        if (listed != threads)
            fail("eu-stack listed %d of %d threads (%s)", listed, threads, path);
        run_row(GDB, threads, path);
        listed = count_lines(path, "Thread ", NULL, &bytes, NULL);
        int frames = count_lines(path, "#", NULL, NULL, NULL);
        printf(" gdb %d threads, %d frames, %ld bytes", listed, frames, bytes);
        if (listed != threads)
            fail("gdb listed %d of %d threads (%s)", listed, threads, path);
    }
    printf("\n");
}

static int pin(void)
{
    cpu_set_t allowed, one;
    const char *wanted = getenv("BENCH_CPU");
    int cpu = wanted != NULL ? atoi(wanted) : -1;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    for (int i = 0; cpu < 0 && i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &allowed))
            cpu = i;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        fail("sched_setaffinity(%d): %s", cpu, strerror(errno));
    return cpu;
}

static void format_ms(char *text, size_t size, double ns)
{
    if (ns <= 0)
        snprintf(text, size, "-");
    else if (ns < 1e6)
        snprintf(text, size, "%.3f", ns / 1e6);
    else
        snprintf(text, size, "%.2f", ns / 1e6);
}

int main(int argc, char **argv)
{
    int repetitions = 11, tool_repetitions = 5;
    int counts[MAX_COUNTS] = { 1, 16, 256, 1000 }, count_total = 4;
    minidump_dir = getenv("BENCH_MINIDUMP_DIR");
    for (int option; (option = getopt(argc, argv, "r:R:n:M:TW")) != -1;) {
        if (option == 'r')
            repetitions = atoi(optarg);
        else if (option == 'R')
            tool_repetitions = atoi(optarg);
        else if (option == 'M')
            minidump_dir = optarg;
        else if (option == 'T')
            tools = 0;
        else if (option == 'W')
            setenv("BENCH_PREWALK", "1", 1);
        else if (option == 'n') {
            count_total = 0;
            for (char *item = strtok(optarg, ","); item != NULL && count_total < MAX_COUNTS;
                 item = strtok(NULL, ","))
                counts[count_total++] = atoi(item);
        } else {
            fprintf(stderr, "usage: %s [-r reps] [-R tool reps] [-n 1,16,256,1000] "
                            "[-M minidump_dir] [-T] [-W]\n", argv[0]);
            return 2;
        }
    }
    if (repetitions < 1 || repetitions > MAX_REPS)
        repetitions = 11;
    if (tool_repetitions < 1 || tool_repetitions > repetitions)
        tool_repetitions = repetitions;
    ssize_t length = readlink("/proc/self/exe", helper, sizeof helper - 32);
    if (length <= 0)
        fail("readlink /proc/self/exe");
    helper[length] = '\0';
    strcat(helper, "_helper");
    snprintf(scratch, sizeof scratch, "/tmp/execinfo_ex_crash_latency-%d", (int)getpid());
    if (mkdir(scratch, 0700) != 0)
        fail("%s: %s", scratch, strerror(errno));
    static char default_minidumps[PATH_MAX + 16];
    if (minidump_dir == NULL) {
        snprintf(default_minidumps, sizeof default_minidumps, "%s/minidumps", scratch);
        minidump_dir = default_minidumps;
    }
    mkdir(minidump_dir, 0700);
    watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch_fd < 0 || inotify_add_watch(watch_fd, scratch, IN_CLOSE_WRITE) < 0)
        fail("inotify: %s", strerror(errno));
    page_fd = memfd_create("crash_latency_page", 0); /* inherited across exec */
    if (page_fd < 0 || ftruncate(page_fd, 4096) != 0 || (page = crowd_page_map(page_fd)) == NULL)
        fail("the shared page: %s", strerror(errno));
    int cpu = pin();

    /* Does this build know minidump=? */
    char *probe[] = { helper, "0", "probe", "0", "minidump=/tmp", NULL };
    {
        char fd_text[16];
        snprintf(fd_text, sizeof fd_text, "%d", page_fd);
        probe[1] = fd_text;
        int status = reap(start(probe, -1), NULL);
        minidump_available = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }

    printf("Every-thread report (issue 23): fault to end of report, and a dump beside eu-stack "
           "and gdb\n");
    printf("Pinned to CPU %d; medians of %d interleaved repetitions (eu-stack and gdb: the first "
           "%d); ms.\n", cpu, repetitions, tools ? tool_repetitions : 0);
    if (getenv("BENCH_PREWALK") != NULL && strcmp(getenv("BENCH_PREWALK"), "1") == 0)
        printf("DIAGNOSTIC (-W, BENCH_PREWALK=1): every extra thread called backtrace() once "
               "before its wait\n");
    printf("minidump=: %s\n", minidump_available ? minidump_dir
                                                 : "minidump: not available in this build");
    printf("\nChecks (one untimed run of each):\n");
    for (int c = 0; c < count_total; c++)
        check(counts[c]);

    static struct sample samples[MAX_COUNTS][ROWS][MAX_REPS];
    int taken[MAX_COUNTS][ROWS] = { { 0 } };
    uint64_t began = now_ns();
    for (int c = 0; c < count_total; c++) {
        for (int r = 0; r < repetitions; r++)
            for (int k = 0; k < ROWS; k++) {
                enum row row = (enum row)((k + r) % ROWS);
                if ((row == MINI_ALL || row == MINI_ONE) && !minidump_available)
                    continue;
                if ((row == EU_STACK || row == GDB) && (!tools || r >= tool_repetitions))
                    continue;
                samples[c][row][taken[c][row]++] = run_row(row, counts[c], NULL);
            }
    }
    double seconds = (double)(now_ns() - began) / 1e9;

    double medians[MAX_COUNTS][ROWS], reaped[MAX_COUNTS][ROWS];
    for (int c = 0; c < count_total; c++)
        for (int row = 0; row < ROWS; row++) {
            double values[MAX_REPS], more[MAX_REPS];
            for (int i = 0; i < taken[c][row]; i++) {
                values[i] = samples[c][row][i].main_ns;
                more[i] = samples[c][row][i].reaped_ns;
            }
            medians[c][row] = taken[c][row] ? median(values, (size_t)taken[c][row]) : 0;
            reaped[c][row] = taken[c][row] ? median(more, (size_t)taken[c][row]) : 0;
        }

    printf("\nFault to end of report (crash; \"callback\" is t0 to the crash callback, just "
           "before the end line;\n\"reaped\" is t0 to this process's waitpid), and kill(USR1) to "
           "the dump's file closed (ms):\n\n");
    printf("| threads | crash 1024 callback | crash 1024 reaped | crash 1 callback | crash 1 "
           "reaped | dump 1024 | dump 1 | minidump 1024 callback | minidump 1 callback |\n");
    printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int c = 0; c < count_total; c++) {
        char a[64], b[64], d[64], e[64], f[64], g[64], h[64], i[64];
        format_ms(a, sizeof a, medians[c][CRASH_ALL]);
        format_ms(b, sizeof b, reaped[c][CRASH_ALL]);
        format_ms(d, sizeof d, medians[c][CRASH_ONE]);
        format_ms(e, sizeof e, reaped[c][CRASH_ONE]);
        format_ms(f, sizeof f, medians[c][DUMP_ALL]);
        format_ms(g, sizeof g, medians[c][DUMP_ONE]);
        format_ms(h, sizeof h, medians[c][MINI_ALL]);
        format_ms(i, sizeof i, medians[c][MINI_ONE]);
        if (!minidump_available) {
            snprintf(h, sizeof h, "minidump: not available in this build");
            snprintf(i, sizeof i, "minidump: not available in this build");
        }
        printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", counts[c], a, b, d, e, f, g,
               h, i);
    }
    for (int c = 0; c < count_total; c++) {
        const enum row checked[] = { CRASH_ALL, MINI_ALL, DUMP_ALL };
        for (int k = 0; k < 3; k++) {
            int incomplete = 0, most = 0;
            for (int i = 0; i < taken[c][checked[k]]; i++) {
                int missing = samples[c][checked[k]][i].missing;
                incomplete += missing > 0;
                most = missing > most ? missing : most;
            }
            if (incomplete)
                printf("   %d threads, %s: %d of %d reports had threads without frames (at most "
                       "%d): see \"did not answer\" in the report\n", counts[c],
                       row_names[checked[k]], incomplete, taken[c][checked[k]], most);
        }
    }
    if (tools) {
        printf("\nFrom outside, on the same kind of live process (ms, fork to exit), and the "
               "ratio to ours:\n\n");
        printf("| threads | eu-stack | gdb | eu-stack / ours crash (callback) | eu-stack / ours "
               "dump | gdb / ours crash | gdb / ours dump |\n");
        printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int c = 0; c < count_total; c++) {
            char a[32], b[32];
            format_ms(a, sizeof a, medians[c][EU_STACK]);
            format_ms(b, sizeof b, medians[c][GDB]);
            printf("| %d | %s | %s | %.1fx | %.1fx | %.1fx | %.1fx |\n", counts[c], a, b,
                   medians[c][EU_STACK] / medians[c][CRASH_ALL],
                   medians[c][EU_STACK] / medians[c][DUMP_ALL],
                   medians[c][GDB] / medians[c][CRASH_ALL], medians[c][GDB] / medians[c][DUMP_ALL]);
        }
    }

    printf("\nSummary against the targets (issue 23)\n\n");
    printf("   %-44s %10s %10s  %-10s %s\n", "", "ours", "other", "target", "met");
    for (int c = 0; c < count_total; c++) {
        if (counts[c] != 256)
            continue;
        char a[32];
        format_ms(a, sizeof a, medians[c][CRASH_ALL]);
        printf("   %-44s %7s ms %10s  %-10s %s\n", "256 threads, fault to end of report", a, "-",
               "< 50 ms", medians[c][CRASH_ALL] < 50e6 ? "yes" : "NO");
    }
    for (int c = 0; c < count_total && tools; c++) {
        char label[64], a[32], b[32];
        double ratio = medians[c][EU_STACK] / medians[c][CRASH_ALL];
        double dump_ratio = medians[c][EU_STACK] / medians[c][DUMP_ALL];
        format_ms(a, sizeof a, medians[c][CRASH_ALL]);
        format_ms(b, sizeof b, medians[c][EU_STACK]);
        snprintf(label, sizeof label, "%d threads: eu-stack / ours, crash (dump)", counts[c]);
        printf("   %-44s %7s ms %7s ms  %-10s %s (%.1fx; as a dump %.1fx: %s)\n", label, a, b,
               ">= 20x", ratio >= 20 ? "yes" : "NO", ratio, dump_ratio,
               dump_ratio >= 20 ? "yes" : "NO");
    }
    printf("   a 16-thread minidump under 1 MiB: %s\n",
           minidump_available ? "see the check line above" : "minidump: not available in this build");
    printf("\n   timed runs took %.1f s.\n", seconds);

    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf %s", scratch);
    if (system(command) != 0)
        fprintf(stderr, "crash_latency: could not remove %s\n", scratch);
    return 0;
}
