/* dlopen_bench.c: build/bench/dlopen_bench, run by `make bench`: what our
 * dlopen interposer (src/symbolize/load_watch.c, an index refresh after
 * every dlopen and dlclose) costs a program that loads many modules.
 *
 * Each sample is one process of build/bench/dlopen_many_helper, which
 * times its own dlopen loop; the process is also timed whole (fork to
 * reaped: start-up, the loop, exit). Contenders: plain (no library), our
 * library preloaded, preloaded with handler=1, and, when
 * BENCH_DLOPEN_BASELINE names another build of libexecinfo_ex.so (one
 * without the interposer), that one preloaded. Every repetition runs each
 * contender once, in a rotating order; medians of the repetitions
 * (BENCH_DLOPEN_RUNS, default 11). Nothing is asserted. */
#define _GNU_SOURCE
#include "timing.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_CONTENDERS 4
#define MAX_RUNS 101

struct variant {
    const char *name;
    const char *preload;  /* NULL: none */
    const char *options;  /* EXECINFO_EX_OPTIONS, or NULL */
};

/* Fork+exec the helper with ARGV under VARIANT; its "loop opened modules" line. */
static double run_once(char *const argv[], const struct variant *variant, double *process_ns,
                       int *opened, int *modules)
{
    static char *environment[512];
    static char preload[4096], options[256];
    size_t count = 0;
    for (char **entry = environ; *entry != NULL && count < 500; entry++)
        if (strncmp(*entry, "LD_PRELOAD=", 11) != 0 && strncmp(*entry, "EXECINFO_EX_OPTIONS=", 20) != 0)
            environment[count++] = *entry;
    if (variant->preload != NULL) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", variant->preload);
        environment[count++] = preload;
    }
    if (variant->options != NULL) {
        snprintf(options, sizeof options, "EXECINFO_EX_OPTIONS=%s", variant->options);
        environment[count++] = options;
    }
    environment[count] = NULL;

    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        exit(1);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    uint64_t start = now_ns();
    pid_t child;
    if (posix_spawn(&child, argv[0], &actions, NULL, argv, environment) != 0) {
        fprintf(stderr, "dlopen_bench: cannot run %s\n", argv[0]);
        exit(1);
    }
    close(pipe_fds[1]);
    char output[256];
    size_t used = 0;
    ssize_t got;
    while (used + 1 < sizeof output &&
           ((got = read(pipe_fds[0], output + used, sizeof output - 1 - used)) > 0 ||
            (got < 0 && errno == EINTR)))
        used += got > 0 ? (size_t)got : 0;
    output[used] = '\0';
    close(pipe_fds[0]);
    int status;
    waitpid(child, &status, 0);
    *process_ns = (double)(now_ns() - start);
    posix_spawn_file_actions_destroy(&actions);
    unsigned long long loop;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(output, "%llu %d %d", &loop, opened, modules) != 3) {
        fprintf(stderr, "dlopen_bench: %s under '%s' failed (status 0x%x): %s\n", argv[0],
                variant->name, status, output);
        exit(1);
    }
    return (double)loop;
}

static void measure(const char *title, char *const argv[], const struct variant *variants,
                    int variant_count, int runs)
{
    static double loop[MAX_CONTENDERS][MAX_RUNS], process[MAX_CONTENDERS][MAX_RUNS];
    int opened[MAX_CONTENDERS] = { 0 }, modules[MAX_CONTENDERS] = { 0 };
    for (int run = 0; run < runs; run++)
        for (int k = 0; k < variant_count; k++) {
            int v = (run + k) % variant_count;
            loop[v][run] = run_once(argv, &variants[v], &process[v][run], &opened[v], &modules[v]);
        }
    double plain_loop = median(loop[0], (size_t)runs), plain_process = median(process[0], (size_t)runs);
    printf("\n== %s, medians of %d interleaved runs\n", title, runs);
    printf("   %-44s %12s %8s %14s %8s %7s %8s\n", "", "dlopen loop", "ratio", "whole process",
           "ratio", "opened", "modules");
    for (int v = 0; v < variant_count; v++) {
        double l = median(loop[v], (size_t)runs), p = median(process[v], (size_t)runs);
        printf("   %-44s %9.2f ms %7.2fx %11.2f ms %7.2fx %7d %8d\n", variants[v].name, l / 1e6,
               l / plain_loop, p / 1e6, p / plain_process, opened[v], modules[v]);
    }
}

/* Real libraries of a Debian 12 system, opened by soname; the missing are skipped. */
static const char *const system_libraries[] = {
    "libacl.so.1", "libarchive.so.13", "libatomic.so.1", "libattr.so.1", "libblkid.so.1",
    "libbrotlicommon.so.1", "libbrotlidec.so.1", "libbz2.so.1.0", "libcap.so.2",
    "libcom_err.so.2", "libcrypto.so.3", "libctf.so.0", "libcurl.so.4", "libdb-5.3.so",
    "libexpat.so.1", "libffi.so.8", "libgdbm.so.6", "libgfortran.so.5", "libgmp.so.10",
    "libgnutls.so.30", "libgomp.so.1", "libgssapi_krb5.so.2", "libhogweed.so.6",
    "libidn2.so.0", "libisl.so.23", "libitm.so.1", "libk5crypto.so.3", "libkeyutils.so.1",
    "libkrb5.so.3", "libldap-2.5.so.0", "libstdc++.so.6", "libsqlite3.so.0", "libxml2.so.2",
    "libzstd.so.1", "liblzma.so.5", "libssl.so.3", "libmpfr.so.6", "libpcre2-8.so.0",
    "libuuid.so.1", "libncursesw.so.6", "libreadline.so.8", "libmagic.so.1", "libpython3.11.so.1.0",
};

int main(void)
{
    char helper[4096], path[4096];
    snprintf(helper, sizeof helper, "%s/dlopen_many_helper", BENCH_DLOPEN_DIR);
    const char *runs_text = getenv("BENCH_DLOPEN_RUNS");
    int runs = runs_text != NULL ? atoi(runs_text) : 11;
    if (runs < 1 || runs > MAX_RUNS)
        runs = 11;

    struct variant variants[MAX_CONTENDERS] = {
        { "plain", NULL, NULL },
        { "ours preloaded", BENCH_DLOPEN_LIBRARY, NULL },
        { "ours preloaded, handler=1", BENCH_DLOPEN_LIBRARY, "handler=1" },
    };
    int variant_count = 3;
    const char *baseline = getenv("BENCH_DLOPEN_BASELINE");
    if (baseline != NULL && baseline[0] != '\0')
        variants[variant_count++] = (struct variant){ "baseline preloaded (BENCH_DLOPEN_BASELINE)",
                                                      baseline, NULL };
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("dlopen_bench: the cost of the index refresh after each dlopen and dlclose\n");

    enum { GENERATED = 200 };
    static char *generated[GENERATED + 2];
    generated[0] = helper;
    for (int i = 0; i < GENERATED; i++) {
        snprintf(path, sizeof path, "%s/many/module%03d.so", BENCH_DLOPEN_DIR, i);
        generated[i + 1] = strdup(path);
    }
    measure("200 small generated modules (64 functions each), one dlopen each", generated,
            variants, variant_count, runs);

    size_t count = sizeof system_libraries / sizeof *system_libraries;
    static char *system[64];
    system[0] = helper;
    for (size_t i = 0; i < count; i++)
        system[i + 1] = (char *)system_libraries[i];
    measure("43 system libraries by soname (and their dependencies), one dlopen each", system,
            variants, variant_count, runs);

    snprintf(path, sizeof path, "%s/many/module000.so", BENCH_DLOPEN_DIR);
    char *cycle[] = { helper, "--cycle", "200", path, NULL };
    measure("one small module opened and closed 200 times", cycle, variants, variant_count, runs);

    /* Nothing loaded or unloaded: the refresh finds the loader's counters
     * unchanged; a bare name also makes the entry compare search paths. */
    char *again_bare[] = { helper, "--cycle", "10000", "libc.so.6", NULL };
    measure("libc.so.6 (loaded already) opened and closed 10000 times, by soname", again_bare,
            variants, variant_count, runs);
    char *again_path[] = { helper, "--cycle", "10000", "/lib/x86_64-linux-gnu/libc.so.6", NULL };
    measure("the same by path", again_path, variants, variant_count, runs);
    return 0;
}
