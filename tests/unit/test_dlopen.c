/* Modules loaded after start-up (issue 11 item 5): the shared library's
 * dlopen, dlmopen and dlclose bring the symbol index up to date, so that
 * the signal-safe calls and the crash report name a module dlopen'd a
 * moment before, and forget one dlclose'd; and dlopen itself behaves as
 * glibc's, whoever calls it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <execinfo_ex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "support.h"
#include "crash_helpers.h"

static const char *fixture_path(void)
{
    const char *path = getenv("FIXTURE_LIB");
    cr_assert_not_null(path, "FIXTURE_LIB not set");
    return path;
}

/* What backtrace_symbols_fd (signal-safe: it never rebuilds the index)
 * writes for ADDRESS. */
static void symbols_fd_line(void *address, char *line, size_t size)
{
    int fd = memfd_create("symbols", 0);
    cr_assert_geq(fd, 0);
    void *frames[1] = { address };
    backtrace_symbols_fd(frames, 1, fd);
    ssize_t length = pread(fd, line, size - 1, 0);
    cr_assert_gt(length, 0);
    line[length] = '\0';
    close(fd);
}

Test(dlopen, signal_safe_call_names_a_module_just_opened, .timeout = 30)
{
    void *library = dlopen(fixture_path(), RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    char line[512];
    symbols_fd_line((char *)fixture_address() + 1, line, sizeof line);
    cr_assert(strstr(line, "fixture_lib.so(fixture_static_helper+0x1)[") != NULL, "%s", line);
    dlclose(library);
}

static void crash_in_opened_module(void *context)
{
    (void)context;
    install_or_exit(NULL); /* the index is built here, before the dlopen */
    void *library = dlopen(getenv("FIXTURE_LIB"), RTLD_NOW);
    if (library == NULL)
        _exit(98);
    int (*crash)(void) = (int (*)(void))dlsym(library, "fixture_crash");
    _exit(crash());
}

Test(dlopen, crash_report_names_the_functions_of_a_module_opened_after_install, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_in_opened_module, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    cr_assert(strstr(out, "#0  ") && strstr(out, "fixture_lib.so(fixture_crash_inner+") != NULL,
              "%s", out);
    cr_assert(strstr(out, "fixture_lib.so(fixture_crash+0x") != NULL, "%s", out);
    cr_assert(strstr(out, "fixture_lib.so(+0x") == NULL, "%s", out);
    /* and the module is among the modules of the trace */
    cr_assert(strstr(out, "fixture_lib.so build-id ") != NULL, "%s", out);
}

/* A program built without us, under LD_PRELOAD: the core library with
 * handler=1, and the hooks library alone, which comes before libc in the
 * search order while its dependency, the core, comes after (the hooks
 * library passes dlopen on to the core's: load_watch_forward.c). */
static void preload(void *library)
{
    char value[1024];
    snprintf(value, sizeof value, "%s/%s", getenv("EXECINFO_EX_BUILD"), (const char *)library);
    setenv("LD_PRELOAD", value, 1);
    setenv("EXECINFO_EX_OPTIONS", "handler=1", 1);
}

static void assert_preloaded_crash_named(const char *library)
{
    static struct child_result result;
    char program[512];
    snprintf(program, sizeof program, "%s/dlopen_crash", getenv("EXECINFO_EX_TESTS"));
    char *argv[] = { program, NULL };
    run_program(program, argv, preload, (void *)library, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "fixture_lib.so(fixture_crash_inner+") != NULL, "%s",
              result.output);
    cr_assert(strstr(result.output, "fixture_lib.so(fixture_crash+0x") != NULL, "%s", result.output);
}

/* A program without our library dlopens libexecinfo_ex.so and calls its
 * backtrace in a thread made before the dlopen and in one made after,
 * first from a signal handler: the per-thread memo's pointer is 8 bytes of
 * initial-exec TLS (src/unwind/thread_memo.c), which glibc gives a
 * dlopen'd library from its static TLS surplus, in threads that existed
 * before it too. The traces equal glibc's (tests/fixtures/dlopen_backtrace.c). */
Test(dlopen, dlopened_library_backtraces_in_threads, .timeout = 30)
{
    static struct child_result result;
    char program[512], library[512];
    snprintf(program, sizeof program, "%s/dlopen_backtrace", getenv("EXECINFO_EX_TESTS"));
    snprintf(library, sizeof library, "%s/libexecinfo_ex.so", getenv("EXECINFO_EX_BUILD"));
    char *argv[] = { program, library, NULL };
    run_program(program, argv, NULL, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert(strstr(result.output, "ok\n") != NULL, "%s", result.output);
}

Test(dlopen, preloaded_core_library_names_the_module, .timeout = 30)
{
    assert_preloaded_crash_named("libexecinfo_ex.so");
}

Test(dlopen, preloaded_hooks_library_names_the_module, .timeout = 30)
{
    assert_preloaded_crash_named("libexecinfo_ex_hooks.so");
}

Test(dlopen, dlmopen_is_refreshed_too, .timeout = 30)
{
    void *library = dlmopen(LM_ID_BASE, fixture_path(), RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    char line[512];
    symbols_fd_line((char *)fixture_address() + 1, line, sizeof line);
    cr_assert(strstr(line, "fixture_lib.so(fixture_static_helper+0x1)[") != NULL, "%s", line);
    dlclose(library);
}

/* An address of an unloaded module may soon hold other code: it must not
 * be named after the module that was there. */
Test(dlopen, dlclose_forgets_the_module, .timeout = 30)
{
    void *library = dlopen(fixture_path(), RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    void *address = (char *)fixture_address() + 1;
    cr_assert_eq(backtrace_refresh_index(), 0); /* indexed, whoever opened it */
    cr_assert_eq(dlclose(library), 0);
    char line[512];
    symbols_fd_line(address, line, sizeof line);
    cr_assert(strstr(line, "fixture") == NULL, "%s", line);
}

Test(dlopen, failures_are_glibc_own, .timeout = 30)
{
    errno = 0;
    cr_assert_null(dlopen("/nonexistent/libnothing.so", RTLD_NOW));
    const char *message = dlerror();
    cr_assert_not_null(message);
    cr_assert(strstr(message, "/nonexistent/libnothing.so") != NULL, "%s", message);
    cr_assert_null(dlopen("libnothing_at_all.so", RTLD_NOW));
    cr_assert_not_null(dlerror());
    cr_assert_null(dlopen(fixture_path(), 0x12345000)); /* invalid mode */
    cr_assert_not_null(dlerror());
    /* The program itself, and a module already loaded by its soname. */
    void *self = dlopen(NULL, RTLD_NOW);
    cr_assert_not_null(self);
    cr_assert_not_null(dlsym(self, "main"));
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(libc, "%s", dlerror());
    cr_assert_eq(dlsym(libc, "getpid"), (void *)getpid);
    cr_assert_eq(dlclose(libc), 0);
    cr_assert_eq(dlclose(self), 0);
}

/* A successful dlopen leaves errno as glibc's does: compare with libc's
 * own dlopen, called directly. */
Test(dlopen, errno_is_left_as_glibc_leaves_it, .timeout = 30)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *(*libc_dlopen)(const char *, int) =
        (void *(*)(const char *, int))dlvsym(libc, "dlopen", "GLIBC_2.34");
    cr_assert_not_null(libc_dlopen);
    errno = 12345;
    void *first = libc_dlopen(fixture_path(), RTLD_NOW);
    int glibc_errno = errno;
    cr_assert_not_null(first);
    cr_assert_eq(dlclose(first), 0);
    errno = 12345;
    void *second = dlopen(fixture_path(), RTLD_NOW);
    cr_assert_not_null(second);
    cr_assert_eq(errno, glibc_errno);
    errno = 12345;
    cr_assert_eq(dlclose(second), 0);
    cr_assert_eq(errno, 12345);
}

/* Run the fixture PROGRAM (PREPARE, if not NULL, in its child): it opens
 * its plugin and names a static function of it with a signal-safe call. */
static void assert_plugin_named(const char *program_name, void (*prepare)(void *))
{
    static struct child_result result;
    char program[512];
    snprintf(program, sizeof program, "%s/%s", getenv("EXECINFO_EX_TESTS"), program_name);
    char *argv[] = { program, NULL };
    run_program(program, argv, prepare, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert(strstr(result.output, "libfixture_plugin.so(fixture_static_helper+0x1)[") != NULL,
              "%s", result.output);
}

/* A bare name found along the program's own RUNPATH, and $ORIGIN: glibc
 * searches from the calling module, which our dlopen must not replace by
 * itself (a plain wrapper makes both opens fail). */
Test(dlopen, caller_runpath_and_origin_are_the_callers, .timeout = 30)
{
    assert_plugin_named("dlopen_caller", NULL);
}

static void preload_hooks(void *context)
{
    (void)context;
    char library[512];
    snprintf(library, sizeof library, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
    setenv("LD_PRELOAD", library, 1);
}

/* The same through the hooks library's dlopen, preloaded: it drops
 * RTLD_DEEPBIND and goes on to the core's, and must keep the caller too
 * (a C wrapper keeps it only where the compiler makes its last call a
 * jump: it failed at -O1). */
Test(dlopen, caller_runpath_is_kept_through_the_preloaded_hooks_library, .timeout = 30)
{
    assert_plugin_named("dlopen_caller", preload_hooks);
}

/* The same with a DT_RPATH, which glibc searches whoever the caller is:
 * our dlopen searches as the program would, so it refreshes at once. */
Test(dlopen, caller_rpath_is_searched_and_indexed_at_once, .timeout = 30)
{
    assert_plugin_named("dlopen_caller_rpath", NULL);
}

/* dlopen from a constructor, while the loader is inside the first dlopen
 * (its lock held): no deadlock, and both modules are named. */
Test(dlopen, dlopen_from_a_constructor, .timeout = 30)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fixture_ctor_lib.so", getenv("EXECINFO_EX_TESTS"));
    void *outer = dlopen(path, RTLD_NOW);
    cr_assert_not_null(outer, "%s", dlerror());
    void **inner = dlsym(outer, "fixture_ctor_handle");
    cr_assert_not_null(inner);
    cr_assert_not_null(*inner, "the constructor's dlopen failed");
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(*inner, "fixture_address");
    char line[512];
    symbols_fd_line((char *)fixture_address() + 1, line, sizeof line);
    cr_assert(strstr(line, "fixture_lib.so(fixture_static_helper+0x1)[") != NULL, "%s", line);
    void *(*own)(void) = (void *(*)(void))dlsym(outer, "fixture_ctor_function");
    symbols_fd_line((char *)own() + 1, line, sizeof line);
    cr_assert(strstr(line, "fixture_ctor_lib.so(fixture_ctor_function+0x1)[") != NULL, "%s", line);
}

/* One thread opens and closes while another names addresses with the
 * signal-safe call and a third with backtrace_symbols (which rebuilds). */
static atomic_int stop;

static void *open_and_close(void *unused)
{
    (void)unused;
    for (int i = 0; i < 300 && !atomic_load(&stop); i++) {
        void *library = dlopen(getenv("FIXTURE_LIB"), RTLD_NOW);
        if (library == NULL)
            return (void *)1;
        if (dlclose(library) != 0)
            return (void *)2;
    }
    return NULL;
}

static void *symbolize(void *opaque)
{
    int use_symbols = *(int *)opaque;
    int fd = open("/dev/null", O_WRONLY);
    void *frames[1] = { (char *)symbolize + 1 };
    while (!atomic_load(&stop)) {
        if (use_symbols) {
            char **symbols = backtrace_symbols(frames, 1);
            if (symbols == NULL || strstr(symbols[0], "(symbolize+0x1)") == NULL) {
                fprintf(stderr, "%s\n", symbols ? symbols[0] : "NULL");
                return (void *)3;
            }
            free(symbols);
        } else {
            backtrace_symbols_fd(frames, 1, fd);
        }
    }
    close(fd);
    return NULL;
}

Test(dlopen, open_and_close_while_others_symbolize, .timeout = 60)
{
    pthread_t opener, readers[2];
    int modes[2] = { 0, 1 };
    cr_assert_eq(pthread_create(&readers[0], NULL, symbolize, &modes[0]), 0);
    cr_assert_eq(pthread_create(&readers[1], NULL, symbolize, &modes[1]), 0);
    cr_assert_eq(pthread_create(&opener, NULL, open_and_close, NULL), 0);
    void *opened;
    pthread_join(opener, &opened);
    atomic_store(&stop, 1);
    void *read[2];
    pthread_join(readers[0], &read[0]);
    pthread_join(readers[1], &read[1]);
    cr_assert_null(opened, "dlopen/dlclose failed: %p", opened);
    cr_assert_null(read[0]);
    cr_assert_null(read[1]);
}

/* In a child of fork, dlopen still refreshes (the build lock was released
 * in the child) and names the new module. */
Test(dlopen, after_fork, .timeout = 30)
{
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        void *library = dlopen(getenv("FIXTURE_LIB"), RTLD_NOW);
        if (library == NULL)
            _exit(1);
        void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
        char line[512];
        int fd = memfd_create("symbols", 0);
        void *frames[1] = { (char *)fixture_address() + 1 };
        backtrace_symbols_fd(frames, 1, fd);
        ssize_t length = pread(fd, line, sizeof line - 1, 0);
        line[length > 0 ? length : 0] = '\0';
        _exit(strstr(line, "(fixture_static_helper+0x1)") != NULL ? 0 : 2);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x", status);
}
