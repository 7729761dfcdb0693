/* The fatal-signal handler, crashing for real in child processes: how each
 * died, and what it wrote. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo_ex.h>
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "support.h"
#include "test_asm.h"
#include "crash_helpers.h"

/* ---- real faults of every kind ---- */

static void crash_null_write(void *context)
{
    install_or_exit(context);
    write_to_null();
}

Test(fatal, null_write_reports_and_dies_by_sigsegv, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_null_write, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    cr_assert(strstr(out, "fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault address 0x10"), "%s", out);
    cr_assert(strstr(out, "#0  ") && strstr(out, "(write_to_null+"), "%s", out);
    cr_assert(strstr(out, "test_fatal.c:"), "no file:line\n%s", out);
    cr_assert(strstr(out, " build-id "), "%s", out);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    cr_assert_eq(count_of(out, "*** execinfo_ex: fatal signal"), 1);
}

__attribute__((noinline)) static void jump_to_one(void)
{
    void (*function)(void) = (void (*)(void))1;
    function();
}

static void crash_jump(void *context) { install_or_exit(context); jump_to_one(); }

Test(fatal, jump_to_address_one, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_jump, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "fault address 0x1"), "%s", result.output);
    cr_assert(strstr(result.output, "#0  [0x1]"), "%s", result.output);
    /* The walk still reaches the caller through the return address. */
    cr_assert(strstr(result.output, "(jump_to_one+0x"), "%s", result.output);
}

static volatile int divisor;
__attribute__((noinline)) static int divide(int x) { return x / divisor; }
static void crash_divide(void *context) { install_or_exit(context); _exit(divide(7)); }

Test(fatal, integer_divide_by_zero, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_divide, NULL, &result);
    assert_died_by(&result, SIGFPE);
    cr_assert(strstr(result.output, "(SIGFPE), code 1 (FPE_INTDIV)"), "%s", result.output);
    cr_assert(strstr(result.output, "(divide+0x"), "%s", result.output);
}

static void crash_abort(void *context) { install_or_exit(context); abort(); }

Test(fatal, abort_reports_sigabrt_sent_by_itself, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_abort, NULL, &result);
    assert_died_by(&result, SIGABRT);
    cr_assert(strstr(result.output, "(SIGABRT), code -6 (SI_TKILL), sent by pid "), "%s", result.output);
    cr_assert(strstr(result.output, "(abort+0x"), "%s", result.output);
}

static void crash_trap(void *context) { install_or_exit(context); __builtin_trap(); }

Test(fatal, builtin_trap_is_sigill, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_trap, NULL, &result);
    assert_died_by(&result, TEST_TRAP_SIGNAL); /* SIGTRAP on aarch64: test_asm.h */
    cr_assert(strstr(result.output, TEST_TRAP_HEADLINE), "%s", result.output);
}

static void crash_bus(void *context)
{
    install_or_exit(context);
    char path[] = "/tmp/execinfo_ex_bus_XXXXXX";
    int fd = mkstemp(path);
    ftruncate(fd, 4096);
    volatile char *map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
    unlink(path);
    ftruncate(fd, 0); /* the mapping outlives the file's bytes */
    _exit(map[100]);
}

Test(fatal, sigbus_from_a_truncated_mapping, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_bus, NULL, &result);
    assert_died_by(&result, SIGBUS);
    cr_assert(strstr(result.output, "(SIGBUS), code 2 (BUS_ADRERR)"), "%s", result.output);
}

/* ---- sent signals ---- */

static void wait_to_be_killed(void *context)
{
    install_or_exit(context);
    write(2, "ready\n", 6);
    for (;;)
        pause();
}

Test(fatal, signal_sent_by_kill_names_the_sender_and_is_reraised, .timeout = 30)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    pid_t child = fork();
    if (child == 0) {
        dup2(pipe_fds[1], 2);
        close(pipe_fds[0]);
        wait_to_be_killed(NULL);
    }
    close(pipe_fds[1]);
    char ready[8];
    cr_assert_eq(read(pipe_fds[0], ready, 6), 6);
    kill(child, SIGSEGV);
    static char output[1 << 16];
    read_all(pipe_fds[0], output, sizeof output);
    int status;
    waitpid(child, &status, 0);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status 0x%x", status);
    char expected[64];
    snprintf(expected, sizeof expected, "code 0 (SI_USER), sent by pid %d", (int)getpid());
    cr_assert(strstr(output, expected), "%s", output);
}

/* ---- chaining ---- */

static void previous_siginfo_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    _exit(40 + signo % 10);
}

static void previous_plain_handler(int signo)
{
    _exit(50 + signo % 10);
}

static void crash_with_previous(void *context)
{
    struct sigaction previous;
    memset(&previous, 0, sizeof previous);
    if (context != NULL) {
        previous.sa_sigaction = previous_siginfo_handler;
        previous.sa_flags = SA_SIGINFO;
    } else {
        previous.sa_handler = previous_plain_handler;
    }
    sigaction(SIGSEGV, &previous, NULL);
    install_or_exit(NULL);
    write_to_null();
}

Test(fatal, chains_to_a_previous_siginfo_handler, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_previous, (void *)1, &result);
    cr_assert(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 41,
              "status 0x%x\n%s", result.status, result.output);
    cr_assert(strstr(result.output, "*** end of report"), "%s", result.output);
}

Test(fatal, chains_to_a_previous_plain_handler, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_previous, NULL, &result);
    cr_assert(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 51,
              "status 0x%x\n%s", result.status, result.output);
    cr_assert(strstr(result.output, "(SIGSEGV)"), "%s", result.output);
}

static void install_then_uninstall(void *context)
{
    (void)context;
    signal(SIGSEGV, previous_plain_handler);
    install_or_exit(NULL);
    backtrace_uninstall_fatal_handler();
    write_to_null();
}

Test(fatal, uninstall_gives_back_the_previous_action, .timeout = 30)
{
    static struct child_result result;
    run_child(install_then_uninstall, NULL, &result);
    cr_assert(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 51);
    cr_assert_eq(strstr(result.output, "fatal signal"), NULL, "%s", result.output);
}

/* Exits 0 when SIGBUS's action after an install and an uninstall is the
 * one before, field by field: handler, flags and every signal of its
 * mask (one of them the last real-time signal: the handler keeps masks
 * in 64 bits, saved_action.c). */
static void install_then_uninstall_keeps_the_action(void *context)
{
    (void)context;
    struct sigaction previous, before, after;
    memset(&previous, 0, sizeof previous);
    previous.sa_sigaction = previous_siginfo_handler;
    previous.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&previous.sa_mask);
    sigaddset(&previous.sa_mask, SIGUSR2);
    sigaddset(&previous.sa_mask, SIGRTMAX);
    if (sigaction(SIGBUS, &previous, NULL) != 0 || sigaction(SIGBUS, NULL, &before) != 0)
        _exit(2);
    install_or_exit(NULL);
    backtrace_uninstall_fatal_handler();
    if (sigaction(SIGBUS, NULL, &after) != 0)
        _exit(3);
    if (after.sa_sigaction != before.sa_sigaction || after.sa_flags != before.sa_flags)
        _exit(4);
    for (int signo = 1; signo <= SIGRTMAX; signo++)
        if (sigismember(&after.sa_mask, signo) != sigismember(&before.sa_mask, signo))
            _exit(5);
    _exit(sigismember(&after.sa_mask, SIGRTMAX) == 1 ? 0 : 6);
}

Test(fatal, uninstall_gives_back_the_previous_flags_and_mask, .timeout = 30)
{
    static struct child_result result;
    run_child(install_then_uninstall_keeps_the_action, NULL, &result);
    cr_assert(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0,
              "status 0x%x (4: handler or flags, 5: mask differ)\n%s", result.status,
              result.output);
}

/* signal() reinstalling our handler without SA_SIGINFO must not crash it. */
static void reinstall_without_siginfo(void *context)
{
    (void)context;
    install_or_exit(NULL);
    struct sigaction ours, plain;
    sigaction(SIGSEGV, NULL, &ours);
    /* What signal() does to a saved SA_SIGINFO handler: the same code, as
     * a one-argument handler. */
    memset(&plain, 0, sizeof plain);
    memcpy(&plain.sa_handler, &ours.sa_sigaction, sizeof plain.sa_handler);
    sigaction(SIGSEGV, &plain, NULL);
    write_to_null();
}

Test(fatal, survives_being_reinstalled_without_siginfo, .timeout = 30)
{
    static struct child_result result;
    run_child(reinstall_without_siginfo, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    /* No siginfo: no invented SI_USER and fault address 0x0. */
    cr_assert(strstr(result.output, "(SIGSEGV), code unknown (no siginfo)\n"), "%s",
              result.output);
}

/* ---- options and destinations ---- */

Test(fatal, bad_options_are_einval_with_one_line)
{
    static struct child_result result;
    errno = 0;
    cr_assert_eq(backtrace_install_fatal_handler("format=xml"), -1);
    cr_assert_eq(errno, EINVAL);
    cr_assert_eq(backtrace_install_fatal_handler("nonsense"), -1);
    (void)result;
}

static void crash_to_file(void *context)
{
    install_or_exit(context);
    write_to_null();
}

Test(fatal, report_file_is_created_0600_and_never_clobbered, .timeout = 30)
{
    static struct child_result result;
    char path[64], options[128];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_report_%d", (int)getpid());
    unlink(path);
    snprintf(options, sizeof options, "report=%s", path);
    run_child(crash_to_file, options, &result);
    assert_died_by(&result, SIGSEGV);
    struct stat info;
    cr_assert_eq(stat(path, &info), 0);
    cr_assert_eq(info.st_mode & 0777, 0600);
    cr_assert_gt(info.st_size, 100);
    cr_assert_eq(strstr(result.output, "fatal signal"), NULL, "the report went to the file");
    /* An existing file is kept; the report goes to stderr instead. */
    run_child(crash_to_file, options, &result);
    cr_assert(strstr(result.output, "fatal signal"), "%s", result.output);
    struct stat again;
    stat(path, &again);
    cr_assert_eq(again.st_size, info.st_size);
    unlink(path);
}

Test(fatal, report_path_that_is_a_symlink_is_not_followed, .timeout = 30)
{
    static struct child_result result;
    char path[64], target[64], options[128];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_link_%d", (int)getpid());
    snprintf(target, sizeof target, "/tmp/execinfo_ex_target_%d", (int)getpid());
    unlink(path);
    unlink(target);
    cr_assert_eq(symlink(target, path), 0);
    snprintf(options, sizeof options, "report=%s:overwrite=1", path);
    run_child(crash_to_file, options, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_neq(access(target, F_OK), 0, "the symlink was followed");
    cr_assert(strstr(result.output, "fatal signal"), "%s", result.output);
    unlink(path);
}

static void crash_json(void *context)
{
    (void)context;
    install_or_exit("format=json:registers=1");
    write_to_null();
}

Test(fatal, json_report_is_valid_json, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_json, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    char path[64];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_json_%d", (int)getpid());
    FILE *file = fopen(path, "w");
    fputs(result.output, file);
    fclose(file);
    char command[512];
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys; r=json.load(open(\"%s\")); "
             "assert r[\"signal_name\"]==\"SIGSEGV\" and r[\"frames\"][0][\"function\"]==\"write_to_null\" "
             "and \"rip\" in r[\"registers\"] and r[\"modules\"][0][\"build_id\"]' ", path);
    int status = system(command);
    unlink(path);
    cr_assert_eq(status, 0, "not valid JSON or wrong content:\n%s", result.output);
}

/* ---- many threads, stack overflow, malloc trapped ---- */

static atomic_int go;

static void *crash_when_told(void *unused)
{
    (void)unused;
    while (!atomic_load(&go)) {
    }
    write_to_null();
    return NULL;
}

static void *idle(void *unused)
{
    (void)unused;
    for (;;)
        pause();
    return NULL;
}

static void many_threads_crash(void *context)
{
    (void)context;
    install_or_exit(NULL);
    pthread_t thread;
    for (int i = 0; i < 32; i++)
        pthread_create(&thread, NULL, idle, NULL);
    for (int i = 0; i < 8; i++)
        pthread_create(&thread, NULL, crash_when_told, NULL);
    atomic_store(&go, 1);
    for (;;)
        pause();
}

Test(fatal, eight_threads_crashing_at_once_give_one_report, .timeout = 120)
{
    static struct child_result result;
    for (int round = 0; round < 20; round++) {
        run_child(many_threads_crash, NULL, &result);
        assert_died_by(&result, SIGSEGV);
        cr_assert_eq(count_of(result.output, "*** execinfo_ex: fatal signal"), 1,
                     "round %d:\n%s", round, result.output);
        cr_assert(strstr(result.output, "*** end of report"), "round %d", round);
    }
}

static volatile int keep_going = 1;

__attribute__((noinline)) static int recurse_forever(int depth)
{
    volatile char pad[256];
    pad[0] = (char)depth;
    return keep_going ? recurse_forever(depth + 1) + pad[0] : 0;
}

static void overflow_main_stack(void *context)
{
    (void)context;
    install_or_exit("frames=16");
    recurse_forever(0);
}

Test(fatal, stack_overflow_in_the_main_thread_is_reported, .timeout = 30)
{
    static struct child_result result;
    run_child(overflow_main_stack, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "(recurse_forever+0x"), "%s", result.output);
    cr_assert(strstr(result.output, "*** end of report"), "%s", result.output);
}

/* Not under ASan (make test-asan): a malloc of our own beside ASan's
 * allocator mixes the two heaps in every test of this file. */
#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static atomic_int malloc_trapped;

static void trap(void)
{
    if (atomic_load(&malloc_trapped)) {
        write(2, "TRAP: allocation in the handler\n", 32);
        _exit(77);
    }
}

void *malloc(size_t size) { trap(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { trap(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { trap(); return __libc_realloc(p, size); }
void free(void *p) { if (p) trap(); __libc_free(p); }

static void crash_with_malloc_trapped(void *context)
{
    (void)context;
    install_or_exit("registers=1");
    atomic_store(&malloc_trapped, 1);
    write_to_null();
}

Test(fatal, the_handler_never_allocates, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_malloc_trapped, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(strstr(result.output, "TRAP"), NULL, "%s", result.output);
    cr_assert(strstr(result.output, "*** registers:"), "%s", result.output);
}
#endif

/* ---- the loader lock, and a program we did not write ---- */

static void *dlopen_forever(void *unused)
{
    (void)unused;
    for (;;) {
        void *library = dlopen(getenv("FIXTURE_LIB"), RTLD_NOW);
        if (library != NULL)
            dlclose(library);
    }
    return NULL;
}

static void crash_while_dlopen_runs(void *context)
{
    (void)context;
    install_or_exit(NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, dlopen_forever, NULL);
    struct timespec pause = { 0, 2 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    write_to_null();
}

Test(fatal, crash_while_another_thread_is_in_the_loader, .timeout = 120)
{
    static struct child_result result;
    cr_assert_not_null(getenv("FIXTURE_LIB"));
    for (int round = 0; round < 30; round++) {
        run_child(crash_while_dlopen_runs, NULL, &result);
        assert_died_by(&result, SIGSEGV);
        cr_assert(strstr(result.output, "*** end of report"), "round %d:\n%s", round, result.output);
    }
}

Test(fatal, preloaded_into_python_reports_its_crash, .timeout = 60)
{
    char command[1024];
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY not set");
    snprintf(command, sizeof command,
             "LD_PRELOAD=%s EXECINFO_EX_OPTIONS=handler=1 python3 -c "
             "'import ctypes; ctypes.string_at(16)' 2>&1", library);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    static char output[1 << 16];
    size_t length = fread(output, 1, sizeof output - 1, pipe);
    output[length] = '\0';
    int status = pclose(pipe);
    /* The shell reports the child's death by signal as 128 + 11. */
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSEGV,
              "status 0x%x\n%s", status, output);
    cr_assert(strstr(output, "fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault address 0x10"),
              "%s", output);
    cr_assert(strstr(output, "python3"), "%s", output);
}

/* The handler installed from the environment names static functions: the
 * index must be complete whichever constructor runs first. */
static void run_captured(const char *command, char *output, size_t capacity, int *status)
{
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(output, 1, capacity - 1, pipe);
    output[length] = '\0';
    *status = pclose(pipe);
}

Test(fatal, handler_from_the_environment_names_static_functions, .timeout = 30)
{
    char command[1024];
    static char output[1 << 16];
    int status;
    snprintf(command, sizeof command, "EXECINFO_EX_OPTIONS=handler=1 %s/crash_static 2>&1",
             getenv("EXECINFO_EX_TESTS"));
    run_captured(command, output, sizeof output, &status);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSEGV, "status 0x%x", status);
    cr_assert(strstr(output, "(crash_in_static_function+"), "%s", output);
    cr_assert(strstr(output, "crash_static.c:7"), "%s", output);
}

Test(fatal, run_tool_reports_and_keeps_the_status, .timeout = 30)
{
    char command[1024], path[64];
    static char output[1 << 16];
    int status;
    const char *run = getenv("EXECINFO_EX_RUN");
    cr_assert_not_null(run);
    snprintf(path, sizeof path, "/tmp/execinfo_ex_run_%d.json", (int)getpid());
    unlink(path);
    snprintf(command, sizeof command, "%s --json -o %s %s/crash_static 2>&1; echo status=$?", run,
             path, getenv("EXECINFO_EX_TESTS"));
    run_captured(command, output, sizeof output, &status);
    cr_assert(strstr(output, "status=139"), "%s", output);
    snprintf(command, sizeof command,
             "python3 -c 'import json; r=json.load(open(\"%s\")); "
             "assert r[\"frames\"][0][\"function\"]==\"crash_in_static_function\"'", path);
    cr_assert_eq(system(command), 0);
    unlink(path);
    snprintf(command, sizeof command, "%s --help; echo status=$?; %s 2>&1; echo status=$?; "
             "%s /nonexistent/program 2>&1; echo status=$?; %s sh -c \"exit 7\"; echo status=$?",
             run, run, run, run);
    run_captured(command, output, sizeof output, &status);
    cr_assert(strstr(output, "Usage: execinfo_ex_run"), "%s", output);
    const char *first = strstr(output, "status=");
    cr_assert(first && strncmp(first, "status=0", 8) == 0, "%s", output);
    cr_assert(strstr(output, "no program given") && strstr(output, "status=2"), "%s", output);
    cr_assert(strstr(output, "cannot run /nonexistent/program") && strstr(output, "status=127"), "%s", output);
    cr_assert(strstr(output, "status=7"), "%s", output);
}

/* ---- threads created after install ---- */

static void *overflow_in_thread(void *unused)
{
    (void)unused;
    recurse_forever(0);
    return NULL;
}

static void overflow_small_pthread(void *context)
{
    (void)context;
    install_or_exit("frames=16");
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_t thread;
    pthread_create(&thread, &attributes, overflow_in_thread, NULL);
    pthread_join(thread, NULL);
}

Test(fatal, stack_overflow_in_a_small_pthread_created_after_install, .timeout = 30)
{
    static struct child_result result;
    run_child(overflow_small_pthread, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "(recurse_forever+0x"), "%s", result.output);
    cr_assert(strstr(result.output, "*** end of report"), "%s", result.output);
}

static void *report_alternate_stack(void *unused)
{
    (void)unused;
    stack_t stack;
    sigaltstack(NULL, &stack);
    return (void *)(uintptr_t)((stack.ss_flags & SS_DISABLE) ? 0 : stack.ss_size);
}

Test(fatal, threads_get_an_alternate_stack_only_while_installed, .timeout = 30)
{
    pthread_t thread;
    void *size;
    pthread_create(&thread, NULL, report_alternate_stack, NULL);
    pthread_join(thread, &size);
    cr_assert_eq(size, NULL, "before install");
    cr_assert_eq(backtrace_install_fatal_handler(NULL), 0);
    pthread_create(&thread, NULL, report_alternate_stack, NULL);
    pthread_join(thread, &size);
    cr_assert_geq((uintptr_t)size, 64 * 1024u);
    backtrace_uninstall_fatal_handler();
    pthread_create(&thread, NULL, report_alternate_stack, NULL);
    pthread_join(thread, &size);
    cr_assert_eq(size, NULL, "after uninstall");
}

/* Pages of the calling thread's alternate stack in memory. */
static size_t alternate_stack_resident_pages(void)
{
    stack_t stack;
    if (sigaltstack(NULL, &stack) != 0 || (stack.ss_flags & SS_DISABLE))
        return (size_t)-1;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char resident[256];
    size_t pages = stack.ss_size / page;
    if (pages > sizeof resident)
        return (size_t)-1;
    if (mincore(stack.ss_sp, stack.ss_size, resident) != 0)
        return (size_t)-1;
    size_t count = 0;
    for (size_t i = 0; i < pages; i++)
        count += resident[i] & 1;
    return count;
}

/* The process's first thread gets its alternate stack at install without
 * a page of it written before a signal comes: the install at load, in
 * every process, touches none of it (issue 26). */
Test(fatal, the_first_threads_alternate_stack_is_untouched_until_a_signal, .timeout = 30)
{
    cr_assert_eq(getpid(), gettid(), "the test runs in its process's first thread");
    cr_assert_eq(backtrace_install_fatal_handler(NULL), 0);
    cr_assert_eq(alternate_stack_resident_pages(), 0);
    /* And mincore sees a page of it once one is written. */
    stack_t stack;
    cr_assert_eq(sigaltstack(NULL, &stack), 0);
    ((volatile char *)stack.ss_sp)[stack.ss_size - 1] = 1;
    cr_assert_eq(alternate_stack_resident_pages(), 1);
    backtrace_uninstall_fatal_handler();
}

/* ---- the crash reporter's callback ---- */

static void add_fields(int fd, int format, int signo, const void *info, const void *ucontext,
                       void *context)
{
    (void)signo;
    (void)info;
    (void)ucontext;
    const char *text = format == BACKTRACE_REPORT_JSON ? ",\"build\":\"1.2.3\"" : "*** build 1.2.3\n";
    write(fd, text, strlen(text));
    *(int *)context = 1;
}

static int callback_ran;

static void crash_with_callback(void *context)
{
    install_or_exit(context);
    backtrace_set_crash_callback(add_fields, &callback_ran);
    write_to_null();
}

Test(fatal, callback_adds_its_lines_before_the_end, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_callback, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *build = strstr(result.output, "*** build 1.2.3\n");
    const char *end = strstr(result.output, "*** end of report");
    cr_assert(build && end && build < end, "%s", result.output);
}

Test(fatal, callback_adds_json_members, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_callback, "format=json", &result);
    assert_died_by(&result, SIGSEGV);
    char path[64], command[512];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_callback_%d.json", (int)getpid());
    FILE *file = fopen(path, "w");
    fputs(result.output, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json; assert json.load(open(\"%s\"))[\"build\"] == \"1.2.3\"'", path);
    int status = system(command);
    unlink(path);
    cr_assert_eq(status, 0, "%s", result.output);
}

/* Each writes its context, a line of text. */
static void write_context(int fd, int format, int signo, const void *info, const void *ucontext,
                          void *context)
{
    (void)format; (void)signo; (void)info; (void)ucontext;
    write(fd, context, strlen(context));
}

static void crash_with_added_callbacks(void *context)
{
    (void)context;
    install_or_exit(NULL);
    if (backtrace_add_crash_callback(write_context, "*** added one\n") != 0 ||
        backtrace_add_crash_callback(write_context, "*** added two\n") != 0 ||
        backtrace_add_crash_callback(write_context, "*** added one\n") != 0 /* again: kept once */ ||
        backtrace_add_crash_callback(write_context, "*** removed\n") != 0 ||
        backtrace_remove_crash_callback(write_context, "*** removed\n") != 0)
        _exit(3);
    /* The program's own callback, set after the libraries': called first. */
    backtrace_set_crash_callback(write_context, "*** the program's\n");
    backtrace_set_crash_callback(write_context, "*** the program's, replaced\n");
    write_to_null();
}

Test(fatal, added_callbacks_run_after_the_programs_in_order, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_added_callbacks, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *program = strstr(result.output, "*** the program's, replaced\n");
    const char *one = strstr(result.output, "*** added one\n");
    const char *two = strstr(result.output, "*** added two\n");
    const char *end = strstr(result.output, "*** end of report");
    cr_assert(program && one && two && end, "%s", result.output);
    cr_assert(program < one && one < two && two < end, "in order: %s", result.output);
    cr_assert_null(strstr(result.output, "*** the program's\n"), "set replaces: %s", result.output);
    cr_assert_eq(count_of(result.output, "*** added one"), 1, "%s", result.output);
    cr_assert_null(strstr(result.output, "*** removed"), "%s", result.output);
}

Test(fatal, adding_callbacks_refuses_null_and_a_fifth)
{
    errno = 0;
    cr_assert_eq(backtrace_add_crash_callback(NULL, NULL), -1);
    cr_assert_eq(errno, EINVAL);
    static char contexts[5];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(backtrace_add_crash_callback(write_context, &contexts[i]), 0, "slot %d", i);
    errno = 0;
    cr_assert_eq(backtrace_add_crash_callback(write_context, &contexts[4]), -1);
    cr_assert_eq(errno, ENOSPC);
    cr_assert_eq(backtrace_remove_crash_callback(write_context, &contexts[2]), 0);
    cr_assert_eq(backtrace_add_crash_callback(write_context, &contexts[4]), 0, "a freed slot is reused");
    errno = 0;
    cr_assert_eq(backtrace_remove_crash_callback(write_context, &contexts[2]), -1);
    cr_assert_eq(errno, ENOENT);
    for (int i = 0; i < 5; i++)
        backtrace_remove_crash_callback(write_context, &contexts[i]);
}

static void fault_in_callback(int fd, int format, int signo, const void *info,
                              const void *ucontext, void *context)
{
    (void)fd; (void)format; (void)signo; (void)info; (void)ucontext; (void)context;
    write_to_null();
}

static void abort_with_faulting_callback(void *context)
{
    (void)context;
    install_or_exit(NULL);
    backtrace_set_crash_callback(fault_in_callback, NULL);
    abort();
}

Test(fatal, a_fault_inside_the_handler_dies_by_the_original_signal, .timeout = 30)
{
    static struct child_result result;
    run_child(abort_with_faulting_callback, NULL, &result);
    assert_died_by(&result, SIGABRT);
    /* What was written before the fault stays; no second report. */
    cr_assert(strstr(result.output, "(SIGABRT)"), "%s", result.output);
    cr_assert_eq(count_of(result.output, "*** execinfo_ex: fatal signal"), 1, "%s", result.output);
}
