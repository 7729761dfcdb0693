/* heap_bench.c: build/bench/heap/heap_bench, the heap part of `make bench`.
 *
 * Runs three malloc-heavy workloads as whole processes: bench/heap/pool.c
 * (issue 14's pool: 10,000 live blocks, random replacements, malloc 15
 * calls deep from 256 paths), bench/heap/churn.c (the adversarial one: its
 * stack changes at every call, in depth and path) and CPython running
 * bench/heap/dict_of_lists.py with PYTHONMALLOC=malloc. Each runs under
 * nine contenders: plain, our hooks library with heap=0, with the
 * defaults (full recording) and with the least recording
 * (heap_frames=1:free_frames=0:guard=0:quarantine=0:free_fill=off), glibc's mtrace, our
 * mtrace, our profiler (execinfo_ex_heap --profile's options: a pprof
 * profile at exit), heaptrack (recording only), an ASan build (pool and churn),
 * guard_pages=1, sample=N (HEAP_BENCH_SAMPLE, 1000) and valgrind's
 * memcheck (issue 25), and, when HEAP_BENCH_OTHER_HOOKS names another
 * build of the hooks library, the profiler with that build too (two
 * builds compared in one interleaved run). One run is one fork + exec + wait4, timed with
 * CLOCK_MONOTONIC, its peak RSS from wait4's ru_maxrss, its CPU time
 * (user + system, which another process's load changes less than the
 * wall) from wait4's rusage. It prints a
 * markdown table of medians per workload and the summary against the heap
 * targets. Benchmarks, not tests: no timing is asserted; the exit status is
 * 1 only for a broken setup (a missing program or preload library, a run
 * that fails or prints other than the plain run, a tracer that wrote no
 * trace), and then the rows say which.
 *
 * Run: make bench (which builds it and the programs it runs), or
 *   build/bench/heap/heap_bench [--help]
 * Environment: HEAP_BENCH_REPEATS, HEAP_BENCH_WORKLOADS, HEAP_BENCH_SKIP,
 * HEAP_BENCH_POOL_OPS, HEAP_BENCH_CHURN_OPS, HEAP_BENCH_PY_COUNT, HEAP_BENCH_SAMPLE,
 * HEAP_BENCH_OTHER_HOOKS.
 * The paths of the programs are compiled in by bench/bench.mk. */
#define _GNU_SOURCE
#include "../timing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(HEAP_BENCH_DIR) || !defined(HEAP_HOOKS_LIBRARY) || !defined(HEAP_PYTHON) || \
    !defined(HEAP_PY_SCRIPT) || !defined(HEAP_MALLOC_DEBUG) || !defined(HEAP_HEAPTRACK) ||  \
    !defined(HEAP_VALGRIND)
#error "built by bench/bench.mk, which defines the paths of the programs"
#endif

/* Sizes: issue 14's. Plain pool takes about 0.32 s, plain churn about
 * 0.58 s, plain python about 0.5 s (on the 2-CPU bench machine, unloaded).
 * glibc's mtrace costs python about 50x (one dladdr per call): at 150k
 * keys that row alone is about 25 s a run, so it runs on python only when
 * asked (HEAP_BENCH_SKIP names the rows left out; by default
 * "mtrace-python"). With 3 repeats the heap bench takes about 3 minutes. */
#define DEFAULT_REPEATS 3
#define DEFAULT_POOL_OPS 2000000
#define DEFAULT_POOL_LIVE "10000"
#define DEFAULT_CHURN_OPS 6000000
#define DEFAULT_PY_COUNT 150000
#define DEFAULT_SKIP "mtrace-python"
#define MAX_REPEATS 101
#define OUTPUT_MAX 4096
/* A trace smaller than this holds a header and no allocations: the tracer
 * did not see the workload (heaptrack on a wrapper script, say). */
#define MIN_TRACE_BYTES 65536

extern char **environ;

enum contender_kind {
    PLAIN, HOOKS_OFF, HOOKS_FULL, HOOKS_LEAST, MTRACE, OUR_MTRACE, PROFILER, HEAPTRACK, ASAN,
    GUARD_PAGES, SAMPLE, VALGRIND, OTHER_PROFILER, CONTENDERS
};
enum workload_kind { POOL, CHURN, PYTHON, WORKLOADS };
enum row_state { ROW_MEASURED, ROW_SKIPPED, ROW_NA, ROW_FAILED };

/* Not const: the sample row's name says its N (HEAP_BENCH_SAMPLE). */
static const char *contender_names[CONTENDERS] = {
    "plain", "hooks heap=0", "hooks full recording", "hooks least recording", "glibc mtrace",
    "hooks mtrace (heap=0)", "hooks profiler", "heaptrack", "ASan build",
    "hooks guard_pages=1", "hooks sample=1000", "valgrind memcheck", "other build's profiler",
};

/* Short names, for HEAP_BENCH_WORKLOADS and HEAP_BENCH_SKIP. */
static const char *const workload_keys[WORKLOADS] = { "pool", "churn", "python" };
static const char *const contender_keys[CONTENDERS] = {
    "plain", "heap0", "full", "least", "mtrace", "ourmtrace", "profile", "heaptrack", "asan",
    "guard", "sample", "valgrind", "profile2",
};

/* Issue 25: every block guarded; GWP-ASan's production mode. */
#define GUARD_OPTIONS "EXECINFO_EX_OPTIONS=guard_pages=1"
#define DEFAULT_SAMPLE 1000
/* valgrind's memcheck, the checker that needs no rebuild: errors on, its
 * leak check off (as the ASan row's detect_leaks=0). */
#define VALGRIND_FLAGS "--tool=memcheck", "--leak-check=no", "-q"

/* The least recording the options allow: one frame, no guards, no
 * quarantine, no fill (the fixed-cost column). */
#define LEAST_OPTIONS "EXECINFO_EX_OPTIONS=heap_frames=1:free_frames=0:guard=0:quarantine=0:free_fill=off"

/* execinfo_ex_heap --profile's options (issue 24): heaptrack's job, a
 * profile at exit, with none of the checker's costs; the profile goes to
 * the trace directory, whose bytes are counted. */
#define PROFILER_OPTIONS "guard=0:quarantine=0:free_fill=off:exit_check=0"

struct workload {
    enum workload_kind kind;
    const char *title;
    char size[32];               /* its one argument: operations or count */
    char expected[OUTPUT_MAX];   /* the plain run's standard output */
};

/* One contender on one workload: the samples of its successful runs. */
struct row {
    enum row_state state;
    int runs;
    double wall_s[MAX_REPEATS];
    double cpu_s[MAX_REPEATS];
    double rss_kib[MAX_REPEATS];
    double trace_bytes[MAX_REPEATS];
    char why[512];               /* FAILED or skipped: the reason */
};

struct command {
    const char *argv[16];
    const char *env[8];          /* added to the cleaned environment */
    int argc, envc;
};

struct run {
    double wall_s;
    double cpu_s;                /* user + system, the child's and its waited-for ones' */
    long rss_kib;
    int status;
    long long trace_bytes;
    char output[OUTPUT_MAX];
    char error[256];             /* the head of its standard error */
};

/* Paths made once: the scratch directory and what lives in it. */
static struct {
    char scratch[PATH_MAX];
    char trace_dir[PATH_MAX];    /* the tracers' output, emptied after each run */
    char stderr_file[PATH_MAX];
    char churn[PATH_MAX], churn_asan[PATH_MAX];
    char pool[PATH_MAX], pool_asan[PATH_MAX];
    const char *skip;            /* HEAP_BENCH_SKIP: "contender-workload" names */
    char hooks_preload[PATH_MAX + 16];
    char other_hooks_preload[PATH_MAX + 16];   /* HEAP_BENCH_OTHER_HOOKS; "" without */
    char mtrace_preload[2 * PATH_MAX + 16];
    char our_mtrace_preload[2 * PATH_MAX + 16];
    char malloc_trace[PATH_MAX + 16];
    char profiler_options[PATH_MAX + 128];
    char heaptrack_output[PATH_MAX];
    const char *heaptrack_flag;  /* the record-only flag, or NULL */
    int have_heaptrack;
    int have_valgrind;
    char sample_name[64];        /* "hooks sample=N" */
    char sample_options[128];    /* its EXECINFO_EX_OPTIONS */
} setup;

static void cleanup(void);

static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *format, ...)
{
    va_list arguments;

    fflush(stdout);
    fprintf(stderr, "heap_bench: setup error: ");
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fprintf(stderr, "\n");
    cleanup();
    exit(1);
}

static void usage(void)
{
    printf("usage: heap_bench [--help]\n"
           "Runs pool, churn and CPython (%s) as whole processes under: plain, the\n"
           "hooks library with heap=0, the defaults and the least recording, glibc\n"
           "mtrace, our mtrace, our profiler, heaptrack (record only), guard_pages=1,\n"
           "sample=N, valgrind memcheck, ASan builds of pool and churn; prints\n"
           "markdown tables of the medians of wall time and peak RSS, and the heap\n"
           "targets' summary.\n"
           "Environment:\n"
           "  HEAP_BENCH_REPEATS    runs per contender (default %d, at most %d)\n"
           "  HEAP_BENCH_WORKLOADS  comma-separated, of pool,churn,python (default all)\n"
           "  HEAP_BENCH_SKIP       rows left out, comma-separated contender-workload\n"
           "                        (contenders: plain heap0 full least mtrace ourmtrace\n"
           "                        profile heaptrack asan guard sample valgrind profile2;\n"
           "                        default %s,\n"
           "                        \"none\" for none)\n"
           "  HEAP_BENCH_POOL_OPS   pool replacements (default %d, of " DEFAULT_POOL_LIVE " blocks)\n"
           "  HEAP_BENCH_CHURN_OPS  churn operations (default %d)\n"
           "  HEAP_BENCH_PY_COUNT   dict_of_lists.py count (default %d)\n"
           "  HEAP_BENCH_SAMPLE     the sample row's N (default %d; sample_seed=1)\n"
           "  HEAP_BENCH_OTHER_HOOKS  another build's libexecinfo_ex_hooks.so: the\n"
           "                        profiler row again with it (contender profile2)\n"
           "Exit status 1 only for a broken setup, never for a timing.\n",
           HEAP_PYTHON, DEFAULT_REPEATS, MAX_REPEATS, DEFAULT_SKIP, DEFAULT_POOL_OPS,
           DEFAULT_CHURN_OPS, DEFAULT_PY_COUNT, DEFAULT_SAMPLE);
}

/* A positive number from the environment, or FALLBACK. */
static long environment_number(const char *name, long fallback)
{
    const char *text = getenv(name);
    char *end;

    if (text == NULL || *text == '\0')
        return fallback;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value <= 0)
        fail("%s=%s: not a positive number", name, text);
    return value;
}

/* snprintf for paths: a path cut short would run or remove the wrong file. */
static __attribute__((format(printf, 3, 4))) void path_printf(char *out, size_t size,
                                                              const char *format, ...)
{
    va_list arguments;

    va_start(arguments, format);
    int length = vsnprintf(out, size, format, arguments);
    va_end(arguments);
    if (length < 0 || (size_t)length >= size)
        fail("path too long: %s", out);
}

/* ---- one run -------------------------------------------------------------- */

/* Our environment less what would change a contender behind its back (the
 * caller's own preload, options or trace file), plus the command's own. */
static char **child_environment(const struct command *command)
{
    static const char *const dropped[] = { "LD_PRELOAD=", "EXECINFO_EX_OPTIONS=", "MALLOC_TRACE=",
                                           "PYTHONMALLOC=", "ASAN_OPTIONS=" };
    static char *list[1024];
    size_t count = 0;

    for (char **entry = environ; *entry != NULL && count < 1000; entry++) {
        int keep = 1;
        for (size_t d = 0; d < sizeof dropped / sizeof *dropped; d++)
            keep &= strncmp(*entry, dropped[d], strlen(dropped[d])) != 0;
        if (keep)
            list[count++] = *entry;
    }
    for (int e = 0; e < command->envc; e++)
        list[count++] = (char *)command->env[e];
    list[count] = NULL;
    return list;
}

/* In the child: stdin from /dev/null, stdout to the pipe, stderr to a file. */
static __attribute__((noreturn)) void exec_child(const struct command *command, char **environment,
                                                 int output_fd)
{
    int in = open("/dev/null", O_RDONLY);
    int err = open(setup.stderr_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    if (in < 0 || err < 0 || dup2(in, 0) < 0 || dup2(output_fd, 1) < 0 || dup2(err, 2) < 0)
        _exit(126);
    execve(command->argv[0], (char *const *)command->argv, environment);
    dprintf(2, "execve %s: %s\n", command->argv[0], strerror(errno));
    _exit(127);
}

/* Read FD to its end: the first CAPACITY - 1 bytes into OUTPUT, the rest
 * drained so that the child never blocks on a full pipe. */
static void read_output(int fd, char *output, size_t capacity)
{
    char spill[4096];
    size_t used = 0;

    for (;;) {
        int full = used + 1 >= capacity;
        ssize_t got = full ? read(fd, spill, sizeof spill)
                           : read(fd, output + used, capacity - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (!full)
            used += (size_t)got;
    }
    output[used] = '\0';
}

/* The first line of the child's standard error, for a failure's reason. */
static void read_error_head(char *error, size_t capacity)
{
    int fd = open(setup.stderr_file, O_RDONLY);
    ssize_t got = fd < 0 ? 0 : read(fd, error, capacity - 1);

    if (fd >= 0)
        close(fd);
    error[got > 0 ? got : 0] = '\0';
    error[strcspn(error, "\n")] = '\0';
}

/* Remove what the tracers wrote; return its size in bytes. */
static long long empty_trace_dir(void)
{
    DIR *directory = opendir(setup.trace_dir);
    long long bytes = 0;
    struct dirent *entry;
    struct stat status;

    if (directory == NULL)
        fail("opendir %s: %s", setup.trace_dir, strerror(errno));
    while ((entry = readdir(directory)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(directory), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) == 0)
            bytes += status.st_size;
        unlinkat(dirfd(directory), entry->d_name, 0);
    }
    closedir(directory);
    return bytes;
}

/* Fork, exec COMMAND, wait4: wall time around all three, the child's peak
 * RSS (for a script, the largest of it and its waited-for descendants:
 * the kernel takes the maximum, not the sum), its output and trace size. */
static void run_once(const struct command *command, struct run *run)
{
    char **environment = child_environment(command);
    struct rusage usage;
    int fds[2];

    fflush(stdout);
    if (pipe2(fds, O_CLOEXEC) != 0)
        fail("pipe: %s", strerror(errno));
    uint64_t start = now_ns();
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0)
        exec_child(command, environment, fds[1]);
    close(fds[1]);
    read_output(fds[0], run->output, sizeof run->output);
    close(fds[0]);
    while (wait4(pid, &run->status, 0, &usage) < 0)
        if (errno != EINTR)
            fail("wait4: %s", strerror(errno));
    run->wall_s = (double)(now_ns() - start) / 1e9;
    run->rss_kib = usage.ru_maxrss;
    run->cpu_s = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                 (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    run->trace_bytes = empty_trace_dir();
    read_error_head(run->error, sizeof run->error);
}

/* ---- the contenders --------------------------------------------------------- */

static void add_argument(struct command *command, const char *argument)
{
    command->argv[command->argc++] = argument;
}

static void add_environment(struct command *command, const char *entry)
{
    command->env[command->envc++] = entry;
}

static void add_workload(struct command *command, const struct workload *workload, int asan)
{
    if (workload->kind == POOL) {
        add_argument(command, asan ? setup.pool_asan : setup.pool);
    } else if (workload->kind == CHURN) {
        add_argument(command, asan ? setup.churn_asan : setup.churn);
    } else {
        /* Every object through malloc, so that every contender sees them. */
        add_environment(command, "PYTHONMALLOC=malloc");
        add_argument(command, HEAP_PYTHON);
        add_argument(command, HEAP_PY_SCRIPT);
    }
    add_argument(command, workload->size);
}

static void build_command(enum contender_kind kind, const struct workload *workload,
                          struct command *command)
{
    memset(command, 0, sizeof *command);
    switch (kind) {
    case PLAIN:
        break;
    case HOOKS_OFF:
        add_environment(command, setup.hooks_preload);
        add_environment(command, "EXECINFO_EX_OPTIONS=heap=0");
        break;
    case HOOKS_FULL:
        add_environment(command, setup.hooks_preload);
        break;
    case HOOKS_LEAST:
        add_environment(command, setup.hooks_preload);
        add_environment(command, LEAST_OPTIONS);
        break;
    case MTRACE:
        add_environment(command, setup.mtrace_preload);
        add_environment(command, setup.malloc_trace);
        break;
    case OUR_MTRACE:
        /* The same constructor's mtrace() binds to the hooks library's. */
        add_environment(command, setup.our_mtrace_preload);
        add_environment(command, "EXECINFO_EX_OPTIONS=heap=0");
        add_environment(command, setup.malloc_trace);
        break;
    case PROFILER:
        add_environment(command, setup.hooks_preload);
        add_environment(command, setup.profiler_options);
        break;
    case OTHER_PROFILER:
        add_environment(command, setup.other_hooks_preload);
        add_environment(command, setup.profiler_options);
        break;
    case HEAPTRACK:
        add_argument(command, HEAP_HEAPTRACK);
        if (setup.heaptrack_flag != NULL)
            add_argument(command, setup.heaptrack_flag);
        add_argument(command, "-o");
        add_argument(command, setup.heaptrack_output);
        break;
    case ASAN:
        add_environment(command, "ASAN_OPTIONS=detect_leaks=0");
        break;
    case GUARD_PAGES:
        add_environment(command, setup.hooks_preload);
        add_environment(command, GUARD_OPTIONS);
        break;
    case SAMPLE:
        add_environment(command, setup.hooks_preload);
        add_environment(command, setup.sample_options);
        break;
    case VALGRIND: {
        static const char *const flags[] = { HEAP_VALGRIND, VALGRIND_FLAGS };
        for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
            add_argument(command, flags[i]);
        break;
    }
    case CONTENDERS:
        break;
    }
    add_workload(command, workload, kind == ASAN);
    command->argv[command->argc] = NULL;
}

/* Does OUTPUT hold EXPECTED as whole lines? The heaptrack script writes
 * its own messages to the same standard output, around the program's. */
static int has_lines(const char *output, const char *expected)
{
    size_t length = strlen(expected);

    for (const char *at = strstr(output, expected); at != NULL; at = strstr(at + 1, expected))
        if ((at == output || at[-1] == '\n') && (at[length] == '\0' || at[length - 1] == '\n'))
            return 1;
    return 0;
}

static void describe_status(int status, char *text, size_t size)
{
    if (WIFEXITED(status))
        snprintf(text, size, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(text, size, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(text, size, "wait status %#x", status);
}

/* Is RUN a good one? If not, say why in WHY. */
static int check_run(enum contender_kind kind, const struct workload *workload,
                     const struct run *run, char *why, size_t size)
{
    char status[64];
    int ok_output = kind == HEAPTRACK ? has_lines(run->output, workload->expected)
                                      : strcmp(run->output, workload->expected) == 0;

    if (!WIFEXITED(run->status) || WEXITSTATUS(run->status) != 0) {
        describe_status(run->status, status, sizeof status);
        snprintf(why, size, "%s; stderr: %s", status, run->error[0] ? run->error : "(empty)");
        return 0;
    }
    if (!ok_output) {
        snprintf(why, size, "stdout differs from plain's: \"%.*s\"",
                 (int)strcspn(run->output, "\n"), run->output);
        return 0;
    }
    if ((kind == PROFILER || kind == OTHER_PROFILER) && run->trace_bytes <= 0) {
        snprintf(why, size, "no profile written");
        return 0;
    }
    if ((kind == MTRACE || kind == OUR_MTRACE || kind == HEAPTRACK) &&
        run->trace_bytes < MIN_TRACE_BYTES) {
        snprintf(why, size, "trace of only %lld bytes: it recorded nothing", run->trace_bytes);
        return 0;
    }
    return 1;
}

/* ---- setup ----------------------------------------------------------------- */

static int is_executable(const char *path)
{
    return access(path, X_OK) == 0;
}

static void need_file(const char *path, const char *what)
{
    if (access(path, R_OK) != 0)
        fail("%s %s: %s", what, path, strerror(errno));
}

/* heaptrack's flag for recording without the interpreting pass: newer
 * versions may call it --record-only; 1.4.0 has -r/--raw. Without either
 * the row measures heaptrack with its on-the-fly interpreter. */
static void choose_heaptrack_flag(void)
{
    struct command command = { .argv = { HEAP_HEAPTRACK, "--help", NULL }, .argc = 2 };
    static struct run run;

    run_once(&command, &run);
    if (strstr(run.output, "--record-only") != NULL)
        setup.heaptrack_flag = "--record-only";
    else if (strstr(run.output, "--raw") != NULL)
        setup.heaptrack_flag = "--raw";
}

static void make_scratch(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(setup.scratch, sizeof setup.scratch, "%s/heap_bench.XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(setup.scratch) == NULL)
        fail("mkdtemp %s: %s", setup.scratch, strerror(errno));
    path_printf(setup.trace_dir, sizeof setup.trace_dir, "%s/trace", setup.scratch);
    path_printf(setup.stderr_file, sizeof setup.stderr_file, "%s/stderr", setup.scratch);
    if (mkdir(setup.trace_dir, 0700) != 0)
        fail("mkdir %s: %s", setup.trace_dir, strerror(errno));
}

static void cleanup(void)
{
    if (setup.trace_dir[0] != '\0') {
        empty_trace_dir();
        rmdir(setup.trace_dir);
        unlink(setup.stderr_file);
        rmdir(setup.scratch);
        setup.trace_dir[0] = '\0';
    }
}

static void prepare(void)
{
    path_printf(setup.churn, sizeof setup.churn, "%s/churn", HEAP_BENCH_DIR);
    path_printf(setup.churn_asan, sizeof setup.churn_asan, "%s/churn_asan", HEAP_BENCH_DIR);
    path_printf(setup.hooks_preload, sizeof setup.hooks_preload, "LD_PRELOAD=%s",
                HEAP_HOOKS_LIBRARY);
    const char *other = getenv("HEAP_BENCH_OTHER_HOOKS");
    if (other != NULL && other[0] != '\0') {
        need_file(other, "preload library");
        path_printf(setup.other_hooks_preload, sizeof setup.other_hooks_preload, "LD_PRELOAD=%s",
                    other);
    }
    path_printf(setup.mtrace_preload, sizeof setup.mtrace_preload,
                "LD_PRELOAD=%s %s/mtrace_start.so", HEAP_MALLOC_DEBUG, HEAP_BENCH_DIR);
    path_printf(setup.our_mtrace_preload, sizeof setup.our_mtrace_preload,
                "LD_PRELOAD=%s %s/mtrace_start.so", HEAP_HOOKS_LIBRARY, HEAP_BENCH_DIR);
    path_printf(setup.pool, sizeof setup.pool, "%s/pool", HEAP_BENCH_DIR);
    path_printf(setup.pool_asan, sizeof setup.pool_asan, "%s/pool_asan", HEAP_BENCH_DIR);
    need_file(setup.pool, "workload");
    need_file(setup.pool_asan, "workload");
    need_file(setup.churn, "workload");
    need_file(setup.churn_asan, "workload");
    need_file(HEAP_PYTHON, "python");
    need_file(HEAP_PY_SCRIPT, "workload");
    need_file(HEAP_HOOKS_LIBRARY, "preload library");
    need_file(HEAP_MALLOC_DEBUG, "preload library");
    need_file(HEAP_BENCH_DIR "/mtrace_start.so", "preload library");
    make_scratch();
    path_printf(setup.malloc_trace, sizeof setup.malloc_trace, "MALLOC_TRACE=%s/mtrace",
                setup.trace_dir);
    path_printf(setup.heaptrack_output, sizeof setup.heaptrack_output, "%s/ht",
                setup.trace_dir);
    path_printf(setup.profiler_options, sizeof setup.profiler_options,
                "EXECINFO_EX_OPTIONS=" PROFILER_OPTIONS ":profile=%s/profile.pb.gz", setup.trace_dir);
    setup.have_heaptrack = is_executable(HEAP_HEAPTRACK);
    setup.have_valgrind = is_executable(HEAP_VALGRIND);
    if (setup.have_heaptrack)
        choose_heaptrack_flag();
}

/* ---- measuring ------------------------------------------------------------- */

/* Is WORD one of the comma-separated words of LIST? */
static int list_has(const char *list, const char *word)
{
    size_t length = strlen(word);

    for (const char *at = list; at != NULL; at = strchr(at, ',')) {
        at += *at == ',';
        if (strncmp(at, word, length) == 0 && (at[length] == ',' || at[length] == '\0'))
            return 1;
    }
    return 0;
}

static int is_skipped(enum contender_kind kind, enum workload_kind workload)
{
    char word[64];

    if (kind == PLAIN)
        return 0; /* every ratio is to plain */
    snprintf(word, sizeof word, "%s-%s", contender_keys[kind], workload_keys[workload]);
    return list_has(setup.skip, word);
}

static void initial_state(enum contender_kind kind, const struct workload *workload,
                          struct row *row)
{
    memset(row, 0, sizeof *row);
    row->state = ROW_MEASURED;
    if (kind == HEAPTRACK && !setup.have_heaptrack) {
        row->state = ROW_SKIPPED;
        snprintf(row->why, sizeof row->why, "skipped: heaptrack not installed (%s)",
                 HEAP_HEAPTRACK);
    } else if (kind == OTHER_PROFILER && setup.other_hooks_preload[0] == '\0') {
        row->state = ROW_SKIPPED;
        snprintf(row->why, sizeof row->why, "skipped: HEAP_BENCH_OTHER_HOOKS not set");
    } else if (kind == VALGRIND && !setup.have_valgrind) {
        row->state = ROW_SKIPPED;
        snprintf(row->why, sizeof row->why, "skipped: valgrind not installed (%s)",
                 HEAP_VALGRIND);
    } else if (kind == ASAN && workload->kind == PYTHON) {
        row->state = ROW_NA;
        snprintf(row->why, sizeof row->why, "n/a: the ASan contender is a build of pool or churn");
    } else if (is_skipped(kind, workload->kind)) {
        row->state = ROW_SKIPPED;
        snprintf(row->why, sizeof row->why, "skipped: HEAP_BENCH_SKIP has %s-%s",
                 contender_keys[kind], workload_keys[workload->kind]);
    }
}

/* The plain run's output is what every other run must print. This run is
 * not counted: it also warms the page cache for the program and libc. */
static void learn_expected(struct workload *workload)
{
    static struct run run;
    struct command command;
    char status[64];

    build_command(PLAIN, workload, &command);
    run_once(&command, &run);
    if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0 || run.output[0] == '\0') {
        describe_status(run.status, status, sizeof status);
        fail("plain %s failed (%s): %s", command.argv[0], status, run.error);
    }
    memcpy(workload->expected, run.output, sizeof run.output);
}

static void measure_one(enum contender_kind kind, const struct workload *workload,
                        struct row *row)
{
    static struct run run;
    struct command command;

    build_command(kind, workload, &command);
    run_once(&command, &run);
    if (!check_run(kind, workload, &run, row->why, sizeof row->why)) {
        row->state = ROW_FAILED; /* and no more runs of it: it measures nothing */
        return;
    }
    row->wall_s[row->runs] = run.wall_s;
    row->cpu_s[row->runs] = run.cpu_s;
    row->rss_kib[row->runs] = (double)run.rss_kib;
    row->trace_bytes[row->runs] = (double)run.trace_bytes;
    row->runs++;
}

/* Round-robin: each repetition runs every contender once, starting one
 * further along each time, so that a noisy phase of the (two, shared)
 * CPUs hits every contender alike and the medians drop it. */
static void measure_workload(struct workload *workload, struct row rows[CONTENDERS], int repeats)
{
    learn_expected(workload);
    for (int c = 0; c < CONTENDERS; c++)
        initial_state((enum contender_kind)c, workload, &rows[c]);
    for (int r = 0; r < repeats; r++) {
        fprintf(stderr, "heap_bench: %s, repetition %d of %d\n", workload->title, r + 1, repeats);
        for (int k = 0; k < CONTENDERS; k++) {
            int c = (r + k) % CONTENDERS;
            if (rows[c].state == ROW_MEASURED)
                measure_one((enum contender_kind)c, workload, &rows[c]);
        }
    }
}

/* ---- printing -------------------------------------------------------------- */

static double median_wall(const struct row *row)
{
    return median(row->wall_s, (size_t)row->runs);
}

static double median_cpu(const struct row *row)
{
    return median(row->cpu_s, (size_t)row->runs);
}

static double median_rss(const struct row *row)
{
    return median(row->rss_kib, (size_t)row->runs);
}

static void contender_notes(enum contender_kind kind, const struct row *row, char *notes,
                            size_t size)
{
    double bytes = median(row->trace_bytes, (size_t)row->runs);

    switch (kind) {
    case PLAIN:
        snprintf(notes, size, "no preload");
        break;
    case HOOKS_OFF:
        snprintf(notes, size, "EXECINFO_EX_OPTIONS=heap=0 (pass-through)");
        break;
    case HOOKS_FULL:
        snprintf(notes, size, "EXECINFO_EX_OPTIONS unset: the defaults (16 frames a block)");
        break;
    case HOOKS_LEAST:
        snprintf(notes, size, "%s", LEAST_OPTIONS);
        break;
    case MTRACE:
        snprintf(notes, size, "libc_malloc_debug.so.0 + mtrace_start.so; trace %.0f bytes", bytes);
        break;
    case OUR_MTRACE:
        snprintf(notes, size, "libexecinfo_ex_hooks.so + mtrace_start.so; trace %.0f bytes", bytes);
        break;
    case PROFILER:
        snprintf(notes, size, "execinfo_ex_heap --profile (%s); profile %.0f bytes",
                 PROFILER_OPTIONS, bytes);
        break;
    case OTHER_PROFILER:
        snprintf(notes, size, "the same options, %.200s; profile %.0f bytes",
                 setup.other_hooks_preload + strlen("LD_PRELOAD="), bytes);
        break;
    case HEAPTRACK:
        snprintf(notes, size, "%s%s; trace %.0f bytes; RSS: largest process of its tree",
                 setup.heaptrack_flag ? setup.heaptrack_flag : "with its interpreter",
                 setup.heaptrack_flag ? " (record only, no interpreting)" : "", bytes);
        break;
    case ASAN:
        snprintf(notes, size, "-O2 -g -fsanitize=address, ASAN_OPTIONS=detect_leaks=0");
        break;
    case GUARD_PAGES:
        snprintf(notes, size, "%s", GUARD_OPTIONS);
        break;
    case SAMPLE:
        snprintf(notes, size, "%s", setup.sample_options);
        break;
    case VALGRIND:
        snprintf(notes, size, "%s --tool=memcheck --leak-check=no -q", HEAP_VALGRIND);
        break;
    case CONTENDERS:
        notes[0] = '\0';
        break;
    }
}

static void print_row(enum contender_kind kind, const struct row *row, const struct row *plain)
{
    char notes[512];

    if (row->state != ROW_MEASURED) {
        const char *mark = row->state == ROW_FAILED ? "FAILED" : row->state == ROW_NA ? "n/a" : "-";
        printf("| %s | %s | %s | %s | %s | %s | %s%s |\n", contender_names[kind], mark, mark, mark,
               mark, mark, row->state == ROW_FAILED ? "FAILED: " : "", row->why);
        return;
    }
    contender_notes(kind, row, notes, sizeof notes);
    printf("| %s | %.3f | %.2fx | %.3f | %.1f | %.2fx | %s |\n", contender_names[kind],
           median_wall(row), median_wall(row) / median_wall(plain), median_cpu(row),
           median_rss(row) / 1024, median_rss(row) / median_rss(plain), notes);
}

static void print_table(const struct workload *workload, const struct row rows[CONTENDERS],
                        int repeats)
{
    printf("\n### %s\n\n", workload->title);
    printf("Medians of %d interleaved runs; output checked against plain's: %.*s\n\n", repeats,
           (int)strcspn(workload->expected, "\n"), workload->expected);
    printf("| contender | median wall s | ratio to plain | median CPU s | median peak RSS MiB "
           "| ratio to plain | notes |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (int c = 0; c < CONTENDERS; c++)
        print_row((enum contender_kind)c, &rows[c], &rows[PLAIN]);
}

/* Wall time of CONTENDER over plain on WORKLOAD, or -1 if not measured. */
static double wall_ratio(const struct row rows[WORKLOADS][CONTENDERS], int workload,
                         enum contender_kind kind)
{
    const struct row *row = &rows[workload][kind];
    if (row->state != ROW_MEASURED || rows[workload][PLAIN].state != ROW_MEASURED)
        return -1;
    return median_wall(row) / median_wall(&rows[workload][PLAIN]);
}

/* One line: KIND's wall ratio on every workload measured, against BOUND. */
static void wall_target(const struct row rows[WORKLOADS][CONTENDERS], const int chosen[WORKLOADS],
                        enum contender_kind kind, const char *what, double bound)
{
    int met = 1, unknown = 0;

    printf("- %s wall <= %.2fx plain:", what, bound);
    for (int w = 0; w < WORKLOADS; w++) {
        if (!chosen[w])
            continue;
        double ratio = wall_ratio(rows, w, kind);
        if (ratio < 0) {
            printf(" %s not measured,", workload_keys[w]);
            unknown = 1;
            continue;
        }
        printf(" %s %.2fx,", workload_keys[w], ratio);
        met &= ratio <= bound;
    }
    printf(" %s\n", unknown ? "unknown (a row did not run)" : met ? "met" : "not met");
}

/* KIND's wall time over BASE's, same run, on every workload measured:
 * at most BOUND (sample=N against heap=0, issue 25). */
static void wall_target_against(const struct row rows[WORKLOADS][CONTENDERS],
                                const int chosen[WORKLOADS], enum contender_kind kind,
                                enum contender_kind base, double bound)
{
    int met = 1, unknown = 0;

    printf("- %s wall <= %.2fx %s's:", contender_keys[kind], bound, contender_keys[base]);
    for (int w = 0; w < WORKLOADS; w++) {
        if (!chosen[w])
            continue;
        double ours = wall_ratio(rows, w, kind), theirs = wall_ratio(rows, w, base);
        if (ours < 0 || theirs < 0) {
            printf(" %s not measured,", workload_keys[w]);
            unknown = 1;
            continue;
        }
        const struct row *a = &rows[w][kind], *b = &rows[w][base];
        printf(" %s %.3fx (CPU %.3fx),", workload_keys[w], ours / theirs,
               median_cpu(a) / median_cpu(b));
        met &= ours / theirs <= bound;
    }
    printf(" %s\n", unknown ? "unknown (a row did not run)" : met ? "met" : "not met");
}

/* Full recording ahead of heaptrack --raw on every heap workload. */
static void heaptrack_target(const struct row rows[WORKLOADS][CONTENDERS],
                             const int chosen[WORKLOADS])
{
    int met = 1, unknown = 0;

    printf("- full recording ahead of heaptrack:");
    for (int w = 0; w < WORKLOADS; w++) {
        if (!chosen[w])
            continue;
        double ours = wall_ratio(rows, w, HOOKS_FULL), theirs = wall_ratio(rows, w, HEAPTRACK);
        if (ours < 0 || theirs < 0) {
            printf(" %s not measured,", workload_keys[w]);
            unknown = 1;
            continue;
        }
        printf(" %s %.2fx vs %.2fx,", workload_keys[w], ours, theirs);
        met &= ours < theirs;
    }
    printf(" %s\n", unknown ? "unknown (a row did not run)" : met ? "met" : "not met");
}

/* Peak RSS of full recording over plain's (or over heaptrack's). */
static void rss_target(const struct row rows[WORKLOADS][CONTENDERS], enum workload_kind workload,
                       enum contender_kind against, double bound)
{
    const struct row *full = &rows[workload][HOOKS_FULL], *base = &rows[workload][against];

    if (full->state != ROW_MEASURED || base->state != ROW_MEASURED) {
        printf("- full recording peak RSS <= %.1fx %s's on %s: unknown, a row did not run\n",
               bound, contender_keys[against], workload_keys[workload]);
        return;
    }
    double ratio = median_rss(full) / median_rss(base);
    printf("- full recording peak RSS <= %.1fx %s's on %s: %.2fx (%.1f MiB vs %.1f MiB): %s\n",
           bound, contender_keys[against], workload_keys[workload], ratio,
           median_rss(full) / 1024, median_rss(base) / 1024, ratio <= bound ? "met" : "not met");
}

/* Issue 24's profiler (execinfo_ex_heap --profile): wall at or below
 * heaptrack's, and peak RSS at most RSS_BOUND of plain's, on every
 * workload measured. */
static void profiler_targets(const struct row rows[WORKLOADS][CONTENDERS],
                             const int chosen[WORKLOADS], double rss_bound)
{
    int wall_met = 1, rss_met = 1, unknown = 0;
    char walls[512] = "", peaks[512] = "";
    size_t wall_used = 0, peak_used = 0;

    for (int w = 0; w < WORKLOADS; w++) {
        const struct row *ours = &rows[w][PROFILER], *plain = &rows[w][PLAIN];
        double theirs = wall_ratio(rows, w, HEAPTRACK), mine = wall_ratio(rows, w, PROFILER);
        if (!chosen[w])
            continue;
        if (mine < 0 || theirs < 0) {
            unknown = 1;
            continue;
        }
        double rss = median_rss(ours) / median_rss(plain);
        wall_used += (size_t)snprintf(walls + wall_used, sizeof walls - wall_used,
                                      " %s %.2fx vs %.2fx,", workload_keys[w], mine, theirs);
        peak_used += (size_t)snprintf(peaks + peak_used, sizeof peaks - peak_used,
                                      " %s %.2fx (%.1f MiB vs %.1f MiB),", workload_keys[w], rss,
                                      median_rss(ours) / 1024, median_rss(plain) / 1024);
        wall_met &= mine <= theirs;
        rss_met &= rss <= rss_bound;
    }
    const char *partly = unknown ? " (a row did not run)" : "";
    printf("- profiler wall at or below heaptrack's:%s %s%s\n", walls, wall_met ? "met" : "not met",
           partly);
    printf("- profiler peak RSS <= %.1fx plain's:%s %s%s\n", rss_bound, peaks,
           rss_met ? "met" : "not met", partly);
}

/* Tracing's cost over plain, ours against glibc's: at most BOUND of it. */
static void mtrace_target(const struct row rows[WORKLOADS][CONTENDERS],
                          const int chosen[WORKLOADS], double bound)
{
    for (int w = 0; w < WORKLOADS; w++) {
        const struct row *ours = &rows[w][OUR_MTRACE], *glibc = &rows[w][MTRACE];
        const struct row *plain = &rows[w][PLAIN];
        if (!chosen[w])
            continue;
        if (ours->state != ROW_MEASURED || glibc->state != ROW_MEASURED) {
            printf("- %s: tracing overhead <= %.1fx glibc's: unknown, a row did not run\n",
                   workload_keys[w], bound);
            continue;
        }
        double base = median_wall(plain);
        double ratio = (median_wall(ours) - base) / (median_wall(glibc) - base);
        printf("- %s: tracing overhead <= %.1fx glibc's: %.3fx (%.3f s vs %.3f s over plain; "
               "%.0f vs %.0f bytes written): %s\n",
               workload_keys[w], bound, ratio, median_wall(ours) - base,
               median_wall(glibc) - base, median(ours->trace_bytes, (size_t)ours->runs),
               median(glibc->trace_bytes, (size_t)glibc->runs), ratio <= bound ? "met" : "not met");
    }
}

static void print_summary(const struct row rows[WORKLOADS][CONTENDERS], const int chosen[WORKLOADS])
{
    printf("\nHeap targets (medians; reported, not asserted):\n");
    wall_target(rows, chosen, HOOKS_FULL, "full recording", 2.0);
    heaptrack_target(rows, chosen);
    wall_target(rows, chosen, HOOKS_OFF, "heap=0", 1.03);
    wall_target_against(rows, chosen, SAMPLE, HOOKS_OFF, 1.02);
    if (chosen[PYTHON])
        rss_target(rows, PYTHON, PLAIN, 1.5);
    if (chosen[POOL])
        rss_target(rows, POOL, HEAPTRACK, 1.0);
    mtrace_target(rows, chosen, 0.3);
    profiler_targets(rows, chosen, 1.2);
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static struct workload workloads[WORKLOADS];
    static struct row rows[WORKLOADS][CONTENDERS];
    static char title[WORKLOADS][128];
    int chosen[WORKLOADS], failed = 0;

    if (argc > 1) {
        usage();
        return strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? 0 : 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int repeats = (int)environment_number("HEAP_BENCH_REPEATS", DEFAULT_REPEATS);
    long pool_ops = environment_number("HEAP_BENCH_POOL_OPS", DEFAULT_POOL_OPS);
    long churn_ops = environment_number("HEAP_BENCH_CHURN_OPS", DEFAULT_CHURN_OPS);
    long py_count = environment_number("HEAP_BENCH_PY_COUNT", DEFAULT_PY_COUNT);
    long sample = environment_number("HEAP_BENCH_SAMPLE", DEFAULT_SAMPLE);
    snprintf(setup.sample_name, sizeof setup.sample_name, "hooks sample=%ld", sample);
    snprintf(setup.sample_options, sizeof setup.sample_options,
             "EXECINFO_EX_OPTIONS=sample=%ld:sample_seed=1", sample);
    contender_names[SAMPLE] = setup.sample_name;
    const char *only = getenv("HEAP_BENCH_WORKLOADS");
    setup.skip = getenv("HEAP_BENCH_SKIP") != NULL ? getenv("HEAP_BENCH_SKIP") : DEFAULT_SKIP;
    if (repeats > MAX_REPEATS)
        repeats = MAX_REPEATS;
    for (int w = 0; w < WORKLOADS; w++)
        chosen[w] = only == NULL || *only == '\0' || list_has(only, workload_keys[w]);
    if (!chosen[POOL] && !chosen[CHURN] && !chosen[PYTHON])
        fail("HEAP_BENCH_WORKLOADS=%s: none of pool, churn, python", only);
    prepare();
    uint64_t start = now_ns();

    snprintf(title[POOL], sizeof title[POOL],
             "Heap: pool, %ld replacements of " DEFAULT_POOL_LIVE " live blocks (malloc 15 deep, "
             "256 paths)", pool_ops);
    snprintf(title[CHURN], sizeof title[CHURN], "Heap: churn, %ld operations", churn_ops);
    snprintf(title[PYTHON], sizeof title[PYTHON],
             "Heap: python3 dict_of_lists.py %ld (PYTHONMALLOC=malloc)", py_count);
    long sizes[WORKLOADS] = { pool_ops, churn_ops, py_count };
    for (int w = 0; w < WORKLOADS; w++) {
        workloads[w] = (struct workload){ .kind = (enum workload_kind)w, .title = title[w] };
        snprintf(workloads[w].size, sizeof workloads[w].size, "%ld", sizes[w]);
    }

    printf("\n## Heap benchmark: whole processes, %ld CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("Wall: CLOCK_MONOTONIC around fork + exec + wait4. Peak RSS: wait4's ru_maxrss of the\n"
           "direct child; for heaptrack that is its shell script, and the kernel reports the\n"
           "largest single process of the script and its waited-for children (the program,\n"
           "zstd), not their sum. Load average at the start: ");
    double load[3];
    if (getloadavg(load, 3) == 3)
        printf("%.2f %.2f %.2f (a loaded machine makes the wall times noisy).\n", load[0],
               load[1], load[2]);
    else
        printf("unknown.\n");
    for (int w = 0; w < WORKLOADS; w++) {
        if (!chosen[w])
            continue;
        measure_workload(&workloads[w], rows[w], repeats);
        print_table(&workloads[w], rows[w], repeats);
        for (int c = 0; c < CONTENDERS; c++)
            failed |= rows[w][c].state == ROW_FAILED;
    }
    print_summary((const struct row(*)[CONTENDERS])rows, chosen);
    printf("\nHeap benchmark took %.0f s.\n", (double)(now_ns() - start) / 1e9);
    cleanup();
    if (failed)
        fprintf(stderr, "heap_bench: setup error: a contender FAILED (see its row)\n");
    return failed;
}
