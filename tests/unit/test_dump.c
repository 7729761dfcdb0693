/* A dump of every thread without a crash: backtrace_dump_threads(),
 * dump_signal= and execinfo_ex_run --dump-signal, in child processes that
 * must still be alive, and working, afterwards. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo_ex.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "support.h"
#include "crash_helpers.h"

/* ---- helpers ---- */

static void sleep_ms(int milliseconds)
{
    struct timespec step = { milliseconds / 1000, (milliseconds % 1000) * 1000000L };
    nanosleep(&step, NULL);
}

/* The file's text (malloc'd), once it holds END, within about 10 s;
 * NULL if it never does. */
static char *wait_for_file(const char *path, const char *end)
{
    for (int i = 0; i < 1000; i++) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            char *text = malloc(1 << 20);
            read_all(fd, text, 1 << 20);
            close(fd);
            if (strstr(text, end) != NULL)
                return text;
            free(text);
        }
        sleep_ms(10);
    }
    return NULL;
}

/* The text of the section of thread NAME ("*** thread ... \"NAME\"" up
 * to the next "*** "), copied, or NULL. */
static char *thread_section(const char *report, const char *name)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\" ", name);
    for (const char *at = report; (at = strstr(at, "*** thread ")) != NULL; at++) {
        const char *line_end = strchr(at, '\n');
        const char *found = strstr(at, needle);
        if (found == NULL || line_end == NULL || found > line_end)
            continue;
        const char *next = strstr(line_end, "\n*** ");
        size_t length = next ? (size_t)(next - at) : strlen(at);
        return strndup(at, length);
    }
    return NULL;
}

/* Whether thread TID of process PID sleeps in the kernel, within about
 * 5 s (its stat says S). */
static int sleeps_soon(pid_t pid, pid_t tid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    for (int i = 0; i < 1000; i++) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            text[read_all(fd, text, sizeof text - 1)] = '\0';
            close(fd);
            char *paren = strrchr(text, ')');
            if (paren != NULL && paren[2] == 'S')
                return 1;
        }
        sleep_ms(5);
    }
    return 0;
}

/* Wait until thread TID of this process sleeps in the kernel. */
static void wait_until_sleeping(pid_t tid)
{
    if (!sleeps_soon(getpid(), tid))
        _exit(98);
}

/* ---- a deadlock, shown by kill -QUIT ---- */

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER, second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;
static atomic_int tids[2];
static int ping[2], pong[2];

__attribute__((noinline)) static void lock_first_then_second(void)
{
    pthread_mutex_lock(&first);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&second); /* never returns */
}

__attribute__((noinline)) static void lock_second_then_first(void)
{
    pthread_mutex_lock(&second);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&first); /* never returns */
}

static void *deadlock_a(void *unused)
{
    prctl(PR_SET_NAME, "deadlock_a");
    atomic_store(&tids[0], gettid());
    lock_first_then_second();
    return unused;
}

static void *deadlock_b(void *unused)
{
    prctl(PR_SET_NAME, "deadlock_b");
    atomic_store(&tids[1], gettid());
    lock_second_then_first();
    return unused;
}

/* Answers each byte on ping with one on pong: alive after the dump. */
static void *responder(void *unused)
{
    char byte;
    prctl(PR_SET_NAME, "responder");
    while (read(ping[0], &byte, 1) == 1)
        write(pong[1], &byte, 1);
    return unused;
}

static void deadlocked_program(const char *options, int ready_fd)
{
    pthread_t a, b, r;
    install_or_exit(options);
    pthread_barrier_init(&both_hold_one, NULL, 2);
    pthread_create(&a, NULL, deadlock_a, NULL);
    pthread_create(&b, NULL, deadlock_b, NULL);
    pthread_create(&r, NULL, responder, NULL);
    while (atomic_load(&tids[0]) == 0 || atomic_load(&tids[1]) == 0)
        sleep_ms(1);
    wait_until_sleeping(atomic_load(&tids[0]));
    wait_until_sleeping(atomic_load(&tids[1]));
    write(ready_fd, "r", 1);
    pthread_join(a, NULL); /* never returns */
    _exit(97);
}

static void check_mutex_wait(const char *report, const char *name, const char *function)
{
    char *section = thread_section(report, name);
    cr_assert_not_null(section, "no section for %s in\n%s", name, report);
    cr_assert(strstr(section, "pthread_mutex_lock"), "%s is not in pthread_mutex_lock:\n%s", name,
              section);
    cr_assert(strstr(section, function), "%s does not name %s:\n%s", name, function, section);
    cr_assert(strstr(section, "test_dump.c:"), "no line in\n%s", section);
    /* Waiting in the lock, called from its function: the lock comes first. */
    cr_assert_lt(strstr(section, "pthread_mutex_lock"), strstr(section, function), "%s", section);
    free(section);
}

Test(dump, kill_quit_shows_a_deadlock_and_the_program_runs_on, .timeout = 60)
{
    char report[128], options[256];
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    cr_assert_eq(pipe(ping), 0);
    cr_assert_eq(pipe(pong), 0);
    snprintf(report, sizeof report, "/tmp/execinfo_ex_dump_%d_%%p.txt", getpid());
    snprintf(options, sizeof options, "dump_signal=SIGQUIT:report=%s", report);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0)
        deadlocked_program(options, ready[1]);
    char byte;
    cr_assert_eq(read(ready[0], &byte, 1), 1, "the child never got ready");
    /* Its main thread past the write that said so, asleep in pthread_join
     * (under ASan the signal once came while the write returned). */
    cr_assert(sleeps_soon(child, child), "the child's main thread never slept");
    cr_assert_eq(kill(child, SIGQUIT), 0);
    char path[160];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_dump_%d_%d.txt", getpid(), child);
    char *text = wait_for_file(path, "*** end of report\n");
    cr_assert_not_null(text, "no report in %s", path);
    unlink(path);
    cr_assert(strstr(text, "*** execinfo_ex: thread dump on signal 3 (SIGQUIT)"), "%s", text);
    check_mutex_wait(text, "deadlock_a", "(lock_first_then_second+");
    check_mutex_wait(text, "deadlock_b", "(lock_second_then_first+");
    cr_assert(strstr(text, "pthread_join") || strstr(text, "pthread_clockjoin"),
              "main is not in pthread_join:\n%s", text);
    /* Alive, and its threads run again. */
    cr_assert_eq(waitpid(child, NULL, WNOHANG), 0, "the dump ended the program");
    cr_assert_eq(write(ping[1], "x", 1), 1);
    cr_assert_eq(read(pong[0], &byte, 1), 1);
    cr_assert_eq(byte, 'x');
    kill(child, SIGKILL);
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "it died of the dump first");
    free(text);
}

/* ---- backtrace_dump_threads ---- */

static void *sleeper(void *unused)
{
    prctl(PR_SET_NAME, "sleeper");
    for (;;)
        pause();
    return unused;
}

__attribute__((noinline)) static int dump_from_here(int fd, unsigned flags)
{
    int result = backtrace_dump_threads(fd, flags);
    __asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays */
    return result;
}

static void dump_twice_and_go_on(void *context)
{
    (void)context;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, sleeper, NULL);
    sleep_ms(50);
    /* An fd that was closed: nothing written, the threads released (the
     * dumps after it gather them again). */
    int closed = dup(2);
    close(closed);
    errno = 0;
    int closed_result = backtrace_dump_threads(closed, 0);
    int closed_errno = errno;
    int text = dump_from_here(2, 0);
    int json = dump_from_here(2, BACKTRACE_DUMP_JSON);
    errno = 0;
    int bad_fd = backtrace_dump_threads(-1, 0);
    int bad_fd_errno = errno;
    int bad_flags = backtrace_dump_threads(2, 8);
    int bad_flags_errno = errno;
    dprintf(2, "results %d %d %d/%d %d/%d %d/%d\n", text, json, bad_fd, bad_fd_errno == EBADF,
            bad_flags, bad_flags_errno == EINVAL, closed_result, closed_errno == EBADF);
    _exit(7);
}

Test(dump, backtrace_dump_threads_writes_every_thread_and_returns, .timeout = 30)
{
    static struct child_result result;
    run_child(dump_twice_and_go_on, NULL, &result);
    assert_exited_with(&result, 7);
    const char *out = result.output;
    cr_assert(strstr(out, "results 4 4 -1/1 -1/1 -1/1\n"), "%s", out);
    cr_assert_eq(count_of(out, "*** execinfo_ex: thread dump (backtrace_dump_threads)"), 1, "%s", out);
    cr_assert(strstr(out, "the caller of backtrace_dump_threads first):\n#0  "), "%s", out);
    /* Frame 0 is the caller's own frame, not the library's. */
    const char *first = strstr(out, "first):\n#0  ");
    cr_assert(strstr(first, "(dump_from_here+") < strstr(first, "\n#1 "), "%s", out);
    cr_assert_eq(count_of(out, "\"sleeper\" S (sleeping), "), 3, "%s", out);
    cr_assert_eq(count_of(out, "*** end of report"), 1, "%s", out);
    /* The JSON one: every thread, the caller first. */
    const char *json = strstr(out, "{\"format\":\"execinfo_ex crash report 1\",\"kind\":\"dump\"");
    cr_assert_not_null(json, "%s", out);
    cr_assert(strstr(json, "\"signal\":null"), "%s", json);
    cr_assert_eq(count_of(json, "\"crashing\":false"), 4, "%s", json);
    cr_assert_eq(count_of(json, "\"reporting\":true"), 1, "%s", json);
    cr_assert(strstr(json, "\"threads\":[{\"tid\":"), "%s", json);
    cr_assert(strstr(json, "\"reporting\":true,\"read\":true,\"reason\":null,\"crashed_signal\":null"),
              "%s", json);
}

/* ---- report=: one file for a process's dumps and its crash ---- */

static void dump_then_crash(void *context)
{
    pthread_t t;
    install_or_exit(context);
    pthread_create(&t, NULL, sleeper, NULL);
    sleep_ms(20);
    struct stat before;
    int elsewhere = open("/dev/null", O_WRONLY);
    if (backtrace_dump_threads(elsewhere, 0) < 0) /* to an fd: not the report file */
        _exit(96);
    raise(SIGQUIT); /* the dump signal: to the report file, which it creates */
    if (stat((char *)context + strlen("dump_signal=QUIT:report="), &before) != 0)
        _exit(95);
    write_to_null(); /* appended to the same file */
}

Test(dump, later_reports_of_a_process_append_to_the_file_it_created, .timeout = 30)
{
    static struct child_result result;
    char options[256], path[160];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_append_%d.txt", getpid());
    unlink(path);
    snprintf(options, sizeof options, "dump_signal=QUIT:report=%s", path);
    run_child(dump_then_crash, options, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(result.output[0], '\0', "nothing on stderr:\n%s", result.output);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    static char text[1 << 16];
    read_all(fd, text, sizeof text);
    close(fd);
    unlink(path);
    const char *dump = strstr(text, "*** execinfo_ex: thread dump on signal 3 (SIGQUIT)");
    const char *crash = strstr(text, "*** execinfo_ex: fatal signal 11 (SIGSEGV)");
    cr_assert(dump != NULL && crash != NULL && dump < crash, "%s", text);
    cr_assert_eq(count_of(text, "*** end of report"), 2, "%s", text);
    cr_assert_eq(count_of(text, "\"sleeper\""), 2, "%s", text);
}

/* A file that exists before the process made it is still not written. */
static void crash_with_existing_report(void *context)
{
    install_or_exit(context);
    write_to_null();
}

Test(dump, a_file_made_by_someone_else_is_not_appended_to, .timeout = 30)
{
    static struct child_result result;
    char options[256], path[160];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_other_%d.txt", getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "theirs\n", 7), 7);
    close(fd);
    snprintf(options, sizeof options, "report=%s", path);
    run_child(crash_with_existing_report, options, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "*** execinfo_ex: fatal signal 11"), "to stderr:\n%s",
              result.output);
    char text[64];
    fd = open(path, O_RDONLY);
    read_all(fd, text, sizeof text);
    close(fd);
    unlink(path);
    cr_assert_str_eq(text, "theirs\n");
}

/* %p: each process its own file. */
static void fork_and_both_crash(void *context)
{
    install_or_exit(context);
    pid_t child = fork();
    if (child == 0)
        write_to_null();
    int status;
    waitpid(child, &status, 0);
    dprintf(2, "pids %d %d\n", getpid(), child);
    write_to_null();
}

Test(dump, percent_p_gives_each_process_its_own_report, .timeout = 30)
{
    static struct child_result result;
    char options[256], path[160];
    snprintf(options, sizeof options, "report=/tmp/execinfo_ex_pid_%d_%%p.txt", getpid());
    run_child(fork_and_both_crash, options, &result);
    assert_died_by(&result, SIGSEGV);
    int pids[2];
    cr_assert_eq(sscanf(result.output, "pids %d %d", &pids[0], &pids[1]), 2, "%s", result.output);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/tmp/execinfo_ex_pid_%d_%d.txt", getpid(), pids[i]);
        char *text = wait_for_file(path, "*** end of report\n");
        cr_assert_not_null(text, "%s", path);
        unlink(path);
        char pid_line[64];
        snprintf(pid_line, sizeof pid_line, "*** pid %d,", pids[i]);
        cr_assert(strstr(text, pid_line), "%s holds another process's report:\n%s", path, text);
        cr_assert_eq(count_of(text, "*** execinfo_ex: fatal signal 11"), 1, "%s", text);
        free(text);
    }
}
