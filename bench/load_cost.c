/* load_cost.c: what loading our libraries costs a process, in CPU time
 * (user + system of the children, getrusage), with the index cache off,
 * cold (an empty cache directory) and warm (one filled by an earlier run).
 *
 * Contenders: plain; LD_PRELOAD of the core library with handler=1; of
 * the hooks library with heap=0. Workloads: a trivial program (/bin/true)
 * started N times, CPU per process; a shell loop that starts 200
 * processes, all under the preload; make -j2 of many small units. Each
 * repetition runs every contender once, the order rotating; medians.
 *
 * Usage: load_cost BUILD_DIR [REPETITIONS]. A benchmark, not a test:
 * it checks no timing.
 *
 * load_cost BUILD_DIR REPETITIONS threads: only what the every-thread
 * report's option costs a process that never crashes (issue 23, run by
 * `make bench-threads`): /bin/true, TRUE_RUNS processes a sample, plain,
 * preloaded with handler=1 (threads=1024, the default) and with
 * handler=1:threads=1, both with the warm cache, alternating process by
 * process; CPU (as above) and wall time (spawn to reaped), medians of
 * REPETITIONS x TRUE_RUNS processes each.
 *
 * load_cost BUILD_DIR BLOCKS spawn: the spawn loop of issue 26's steps:
 * /bin/true, 40 processes a block, then a shell starting 10 of them, 4
 * shells a block; plain, an empty library preloaded (the floor: what any
 * LD_PRELOAD costs, bench/empty_preload.c), core handler=1 and hooks
 * heap=0 (both with the warm cache) and both with index_cache=0,
 * alternating block by block (the order rotating), BLOCKS blocks; the
 * median per process of the blocks' CPU and minor page faults (getrusage
 * of the children). Many short blocks, not a few long runs: on a shared
 * machine whose speed drifts, only neighbours compare (the full mode's
 * 5 to 7 repetitions moved its ratios by 0.1 between runs). Run it under
 * taskset -c 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CONTENDERS 3
#define CACHE_MODES 3
#define MAX_REPETITIONS 31
#define TRUE_RUNS 100
#define UNITS 24

static const char *const contender_names[CONTENDERS] = { "plain", "core, handler=1",
                                                        "hooks, heap=0" };
static const char *const cache_names[CACHE_MODES] = { "index_cache=0", "cold cache",
                                                      "warm cache" };
static char core_library[4096], hooks_library[4096], scratch[4096];

static double children_cpu(void)
{
    struct rusage usage;
    getrusage(RUSAGE_CHILDREN, &usage);
    return (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static void fail(const char *what)
{
    fprintf(stderr, "load_cost: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Run ARGV with the environment plus PRELOAD and OPTIONS (NULL: none);
 * returns the exit status. */
static int run(char *const argv[], const char *preload, const char *options)
{
    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + 3, sizeof *env);
    size_t used = 0;
    char preload_entry[4200], options_entry[4200];
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
            strncmp(environ[i], "EXECINFO_EX_OPTIONS=", 20) != 0)
            env[used++] = environ[i];
    if (preload != NULL) {
        snprintf(preload_entry, sizeof preload_entry, "LD_PRELOAD=%s", preload);
        env[used++] = preload_entry;
    }
    if (options != NULL) {
        snprintf(options_entry, sizeof options_entry, "EXECINFO_EX_OPTIONS=%s", options);
        env[used++] = options_entry;
    }
    pid_t pid;
    int status;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, env) != 0)
        fail(argv[0]);
    free(env);
    if (waitpid(pid, &status, 0) < 0)
        fail("waitpid");
    return status;
}

static void remove_tree(const char *path)
{
    char *argv[] = { "rm", "-rf", (char *)path, NULL };
    run(argv, NULL, NULL);
}

/* The preload and options of CONTENDER with CACHE (a directory, or NULL
 * for index_cache=0). */
static void setting(int contender, const char *cache, const char **preload, char *options,
                    size_t size)
{
    char cache_option[4200];
    if (cache != NULL)
        snprintf(cache_option, sizeof cache_option, "index_cache=%s", cache);
    else
        snprintf(cache_option, sizeof cache_option, "index_cache=0");
    *preload = contender == 0 ? NULL : contender == 1 ? core_library : hooks_library;
    snprintf(options, size, "%s:%s", contender == 1 ? "handler=1" : "heap=0", cache_option);
}

/* A fresh empty cache directory for one cold sample. */
static const char *cold_directory(void)
{
    static char path[4200];
    static unsigned serial;
    snprintf(path, sizeof path, "%s/cold-%u", scratch, serial++);
    remove_tree(path);
    return path;
}

static const char *warm_directory(void)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/warm", scratch);
    return path;
}

static const char *directory_for(int mode)
{
    return mode == 0 ? NULL : mode == 1 ? cold_directory() : warm_directory();
}

/* CPU per process of /bin/true; cold: each process with an empty cache. */
static double sample_true(int contender, int mode)
{
    char options[4400];
    const char *preload;
    char *argv[] = { "/bin/true", NULL };
    double total = 0;
    int runs = getenv("BENCH_QUICK") != NULL && strcmp(getenv("BENCH_QUICK"), "1") == 0 ? 3 : TRUE_RUNS;
    for (int i = 0; i < runs; i++) {
        setting(contender, directory_for(mode), &preload, options, sizeof options);
        double before = children_cpu();
        run(argv, preload, contender == 0 ? NULL : options);
        total += children_cpu() - before;
    }
    return total / runs;
}

static double sample_shell(int contender, int mode)
{
    char options[4400];
    const char *preload;
    char *argv[] = { "sh", "-c",
                     "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done", NULL };
    setting(contender, directory_for(mode), &preload, options, sizeof options);
    double before = children_cpu();
    run(argv, preload, contender == 0 ? NULL : options);
    return children_cpu() - before;
}

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    if (file == NULL || fputs(text, file) < 0 || fclose(file) != 0)
        fail(path);
}

static void make_project(void)
{
    char path[4400], text[512];
    snprintf(path, sizeof path, "%s/project", scratch);
    mkdir(path, 0700);
    for (int i = 0; i < UNITS; i++) {
        snprintf(path, sizeof path, "%s/project/unit%d.c", scratch, i);
        snprintf(text, sizeof text,
                 "#include <stdio.h>\n#include <string.h>\n"
                 "int unit%d(const char *s) { char b[64]; snprintf(b, sizeof b, \"%%s%d\", s);\n"
                 "  return (int)strlen(b); }\n", i, i);
        write_file(path, text);
    }
    snprintf(path, sizeof path, "%s/project/Makefile", scratch);
    write_file(path, "SOURCES := $(wildcard unit*.c)\n"
                     "all: $(SOURCES:.c=.o)\n"
                     "%.o: %.c\n\tcc -O1 -c $< -o $@\n"
                     "clean:\n\trm -f *.o\n");
}

static double sample_make(int contender, int mode)
{
    char options[4400], directory[4400];
    const char *preload;
    snprintf(directory, sizeof directory, "%s/project", scratch);
    char *clean[] = { "make", "-s", "-C", directory, "clean", NULL };
    char *build[] = { "make", "-s", "-j2", "-C", directory, NULL };
    run(clean, NULL, NULL);
    setting(contender, directory_for(mode), &preload, options, sizeof options);
    double before = children_cpu();
    if (run(build, preload, contender == 0 ? NULL : options) != 0) {
        errno = 0;
        fail("make");
    }
    return children_cpu() - before;
}

static int by_value(const void *a, const void *b)
{
    double left = *(const double *)a, right = *(const double *)b;
    return left < right ? -1 : left > right;
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, by_value);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

typedef double sampler(int contender, int mode);

static void table(const char *title, sampler *sample, int repetitions, double unit,
                  const char *unit_name)
{
    double values[CONTENDERS][CACHE_MODES][MAX_REPETITIONS];
    for (int r = 0; r < repetitions; r++)
        for (int k = 0; k < CONTENDERS * CACHE_MODES; k++) {
            int slot = (k + r) % (CONTENDERS * CACHE_MODES);
            int contender = slot / CACHE_MODES, mode = slot % CACHE_MODES;
            /* plain does not depend on the cache: one figure, sampled thrice */
            values[contender][mode][r] = sample(contender, contender == 0 ? 0 : mode);
        }
    printf("\n%s (CPU, user + system, median of %d)\n", title, repetitions);
    printf("   %-18s %16s %16s %16s\n", "", cache_names[0], cache_names[1], cache_names[2]);
    double plain = 0;
    for (int contender = 0; contender < CONTENDERS; contender++) {
        double figure[CACHE_MODES];
        for (int mode = 0; mode < CACHE_MODES; mode++)
            figure[mode] = median(values[contender][mode], repetitions);
        if (contender == 0) {
            double all[CACHE_MODES * MAX_REPETITIONS];
            for (int mode = 0; mode < CACHE_MODES; mode++)
                memcpy(all + mode * repetitions, values[0][mode], repetitions * sizeof(double));
            plain = median(all, CACHE_MODES * repetitions);
            printf("   %-18s %13.3f %s\n", contender_names[0], plain / unit, unit_name);
            continue;
        }
        printf("   %-18s", contender_names[contender]);
        for (int mode = 0; mode < CACHE_MODES; mode++)
            printf(" %9.3f %s %5.2fx", figure[mode] / unit, unit_name, figure[mode] / plain);
        printf("\n");
    }
}

/* Issue 23: handler=1 (threads=1024 by default) against
 * handler=1:threads=1, /bin/true, warm cache; CPU and wall per process.
 * The contenders alternate process by process (the order rotating), so
 * that the machine's drift between batches falls on all of them alike;
 * medians of every process's figure. */
#define THREADS_CONTENDERS 3
static void run_true_threads(int contender, double *cpu, double *wall)
{
    static const char *const suffix[THREADS_CONTENDERS] = { NULL, "", ":threads=1" };
    char options[4400];
    const char *preload = contender == 0 ? NULL : core_library;
    char *argv[] = { "/bin/true", NULL };
    struct timespec before_wall, after_wall;
    snprintf(options, sizeof options, "handler=1:index_cache=%s%s", warm_directory(),
             contender == 0 ? "" : suffix[contender]);
    double before = children_cpu();
    clock_gettime(CLOCK_MONOTONIC, &before_wall);
    run(argv, preload, contender == 0 ? NULL : options);
    clock_gettime(CLOCK_MONOTONIC, &after_wall);
    *cpu = children_cpu() - before;
    *wall = (double)(after_wall.tv_sec - before_wall.tv_sec) +
            (after_wall.tv_nsec - before_wall.tv_nsec) / 1e9;
}

static void threads_table(int repetitions)
{
    static const char *const names[THREADS_CONTENDERS] = {
        "plain", "handler=1 (threads=1024)", "handler=1:threads=1" };
    static double cpu[THREADS_CONTENDERS][MAX_REPETITIONS * TRUE_RUNS],
        wall[THREADS_CONTENDERS][MAX_REPETITIONS * TRUE_RUNS];
    int runs = repetitions * TRUE_RUNS;
    for (int contender = 1; contender < THREADS_CONTENDERS; contender++)
        run_true_threads(contender, &cpu[0][0], &wall[0][0]); /* fill the warm cache */
    for (int i = 0; i < runs; i++)
        for (int k = 0; k < THREADS_CONTENDERS; k++) {
            int contender = (k + i) % THREADS_CONTENDERS;
            run_true_threads(contender, &cpu[contender][i], &wall[contender][i]);
        }
    printf("\nStart-up cost of threads= (issue 23): /bin/true under LD_PRELOAD, warm index cache;\n"
           "per process, median of %d processes each, alternating process by process\n\n", runs);
    printf("| | CPU (ms) | wall, spawn to reaped (ms) | CPU vs threads=1 | wall vs threads=1 |\n");
    printf("| --- | ---: | ---: | ---: | ---: |\n");
    double cpu_median[THREADS_CONTENDERS], wall_median[THREADS_CONTENDERS];
    for (int contender = 0; contender < THREADS_CONTENDERS; contender++) {
        cpu_median[contender] = median(cpu[contender], runs);
        wall_median[contender] = median(wall[contender], runs);
    }
    for (int contender = 0; contender < THREADS_CONTENDERS; contender++)
        printf("| %s | %.3f | %.3f | %.4f | %.4f |\n", names[contender], cpu_median[contender] * 1e3,
               wall_median[contender] * 1e3, cpu_median[contender] / cpu_median[2],
               wall_median[contender] / wall_median[2]);
    double cpu_cost = cpu_median[1] / cpu_median[2] - 1, wall_cost = wall_median[1] / wall_median[2] - 1;
    printf("\n   threads=1024 (default) against threads=1: CPU %+.2f%%, wall %+.2f%%; "
           "target: nothing beyond 1%%: %s\n", cpu_cost * 100, wall_cost * 100,
           cpu_cost <= 0.01 && wall_cost <= 0.01 ? "met" : "NOT met");
}

#define SPAWN_CONTENDERS 6
#define SPAWN_MAX_BLOCKS 401
#define SPAWN_BLOCK 40        /* /bin/true processes a block */
#define SPAWN_SHELL_BLOCK 4   /* shells a block, each starting SHELL_CHILDREN */
#define SHELL_CHILDREN 10

static char empty_library[4096]; /* BUILD_DIR/bench/libempty_preload.so */

/* CPU (s) and minor faults of the children so far. */
static void children_usage(double *cpu, double *faults)
{
    struct rusage usage;
    getrusage(RUSAGE_CHILDREN, &usage);
    *cpu = (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    *faults = (double)usage.ru_minflt;
}

/* Contender 0 plain, 1 an empty library preloaded (what any LD_PRELOAD
 * costs: the floor under ours), 2 and 3 core handler=1 and hooks heap=0
 * with the warm cache, 4 and 5 the same with index_cache=0. */
static void spawn_setting(int contender, const char **preload, char *options, size_t size)
{
    if (contender <= 1) {
        *preload = contender == 0 ? NULL : empty_library;
        options[0] = '\0';
        return;
    }
    setting(contender % 2 ? 2 : 1, contender <= 3 ? warm_directory() : NULL, preload, options,
            size);
}

/* One block of WORKLOAD (0: /bin/true, 1: a shell starting SHELL_CHILDREN
 * /bin/true) for CONTENDER: CPU and minor faults per process. */
static void spawn_block(int workload, int contender, double *cpu, double *faults)
{
    static char loop[] = "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done";
    char options[4400];
    const char *preload;
    char *true_argv[] = { "/bin/true", NULL };
    char *shell_argv[] = { "/bin/sh", "-c", loop, NULL };
    char **argv = workload == 0 ? true_argv : shell_argv;
    int count = workload == 0 ? SPAWN_BLOCK : SPAWN_SHELL_BLOCK;
    int processes = workload == 0 ? 1 : 1 + SHELL_CHILDREN;
    spawn_setting(contender, &preload, options, sizeof options);
    double cpu_before, faults_before, cpu_after, faults_after;
    children_usage(&cpu_before, &faults_before);
    for (int i = 0; i < count; i++)
        run(argv, preload, options[0] != '\0' ? options : NULL);
    children_usage(&cpu_after, &faults_after);
    *cpu = (cpu_after - cpu_before) / count / processes;
    *faults = (faults_after - faults_before) / count / processes;
}

static void spawn_table(int workload, int blocks)
{
    static const char *const names[SPAWN_CONTENDERS] = {
        "plain", "an empty library (any LD_PRELOAD's floor)", "core, handler=1, warm",
        "hooks, heap=0, warm", "core, handler=1, index_cache=0", "hooks, heap=0, index_cache=0" };
    static double cpu[SPAWN_CONTENDERS][SPAWN_MAX_BLOCKS], faults[SPAWN_CONTENDERS][SPAWN_MAX_BLOCKS];
    int first = empty_library[0] != '\0' ? 0 : 1; /* contender 1 needs the empty library */
    for (int contender = 2; contender < 4; contender++)
        spawn_block(workload, contender, &cpu[0][0], &faults[0][0]); /* fill the warm cache */
    for (int b = 0; b < blocks; b++)
        for (int k = 0; k < SPAWN_CONTENDERS; k++) {
            int contender = (k + b) % SPAWN_CONTENDERS;
            if (contender == 1 && first)
                continue;
            spawn_block(workload, contender, &cpu[contender][b], &faults[contender][b]);
        }
    if (workload == 0)
        printf("/bin/true, %d blocks of %d processes", blocks, SPAWN_BLOCK);
    else
        printf("\nsh -c 'for i in 1 .. %d; do /bin/true; done', %d blocks of %d shells, all %d "
               "processes of each under the preload", SHELL_CHILDREN, blocks, SPAWN_SHELL_BLOCK,
               1 + SHELL_CHILDREN);
    printf(", contenders alternating block by block;\nmedians of the blocks' per-process figures\n\n");
    printf("| | CPU per process (ms) | over plain (ms) | vs plain | minor faults |\n");
    printf("| --- | ---: | ---: | ---: | ---: |\n");
    double plain = median(cpu[0], blocks);
    for (int contender = 0; contender < SPAWN_CONTENDERS; contender++) {
        if (contender == 1 && first)
            continue;
        double value = median(cpu[contender], blocks);
        printf("| %s | %.3f | %+.3f | %.2fx | %.1f |\n", names[contender], value * 1e3,
               (value - plain) * 1e3, value / plain, median(faults[contender], blocks));
    }
}

static void usage(FILE *to)
{
    fprintf(to, "usage: load_cost BUILD_DIR [REPETITIONS [threads|spawn]]\n"
                "What preloading the libraries of BUILD_DIR costs a process, in CPU\n"
                "time (REPETITIONS, default 5):\n"
                "  (no mode)  /bin/true, a shell loop of 200 processes and make -j2,\n"
                "             plain, core handler=1, hooks heap=0, cache off/cold/warm\n"
                "  threads    /bin/true with threads=1024 against threads=1\n"
                "  spawn      /bin/true in blocks of 40 processes and a shell starting\n"
                "             10 of them in blocks of 4, REPETITIONS blocks (up to 401):\n"
                "             plain, an empty preloaded library (bench/empty_preload.c),\n"
                "             core handler=1 and hooks heap=0, cache warm and off\n"
                "Run it pinned (taskset -c 1). A benchmark: it asserts no timing.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    int spawn = argc > 3 && strcmp(argv[3], "spawn") == 0;
    int repetitions = argc > 2 ? atoi(argv[2]) : 5;
    if (repetitions < 1 || repetitions > (spawn ? SPAWN_MAX_BLOCKS : MAX_REPETITIONS)) {
        fprintf(stderr, "load_cost: REPETITIONS is 1 to %d%s\n",
                spawn ? SPAWN_MAX_BLOCKS : MAX_REPETITIONS, spawn ? " in spawn mode" : "");
        return 2;
    }
    snprintf(core_library, sizeof core_library, "%s/libexecinfo_ex.so", argv[1]);
    snprintf(hooks_library, sizeof hooks_library, "%s/libexecinfo_ex_hooks.so", argv[1]);
    if (access(core_library, R_OK) != 0 || access(hooks_library, R_OK) != 0) {
        fprintf(stderr, "load_cost: %s has no libexecinfo_ex.so or libexecinfo_ex_hooks.so: "
                        "give the build directory (make all builds it)\n", argv[1]);
        return 2;
    }
    snprintf(scratch, sizeof scratch, "/tmp/execinfo_ex_load_cost-%ld", (long)getpid());
    if (mkdir(scratch, 0700) != 0)
        fail(scratch);
    if (argc > 3 && strcmp(argv[3], "threads") == 0) {
        threads_table(repetitions);
        remove_tree(scratch);
        return 0;
    }
    if (spawn) {
        snprintf(empty_library, sizeof empty_library, "%s/bench/libempty_preload.so", argv[1]);
        if (access(empty_library, R_OK) != 0) {
            fprintf(stderr, "load_cost: no %s (make build/bench/libempty_preload.so): its row "
                            "is left out\n", empty_library);
            empty_library[0] = '\0';
        }
        spawn_table(0, repetitions);
        spawn_table(1, repetitions);
        remove_tree(scratch);
        return 0;
    }
    make_project();
    /* Fill the warm cache: every program of every workload, once. */
    for (int contender = 1; contender < CONTENDERS; contender++) {
        sample_true(contender, 2);
        sample_shell(contender, 2);
        sample_make(contender, 2);
    }
    printf("Loading the libraries: CPU per process (loaded machine: 2 shared cores)\n");
    table("1. /bin/true, per process (ms)", sample_true, repetitions, 1e-3, "ms");
    table("2. sh loop starting 200 processes (s)", sample_shell, repetitions, 1, "s ");
    table("3. make -j2 of 24 small units (s)", sample_make, repetitions, 1, "s ");
    remove_tree(scratch);
    return 0;
}
