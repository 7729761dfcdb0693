/* A SIGALRM every millisecond captures and writes a trace, whatever the
 * thread it lands in is doing: allocating, dlopen/dlclose, symbolizing.
 * Bounded: 3 seconds of load and at least 300 handlers (however slow the
 * machine: no rate is asserted), then every handler's output is checked. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "support.h"

#define LOAD_SECONDS 3
#define HANDLERS_AT_LEAST 300

static atomic_int stop;
static atomic_long handled, empty_traces;
static int sink_fd;

static void on_alarm(int signo)
{
    void *frames[64];
    int saved_errno = errno;
    (void)signo;
    int count = backtrace(frames, 64);
    if (count <= 0)
        atomic_fetch_add(&empty_traces, 1);
    backtrace_symbols_fd(frames, count, sink_fd);
    atomic_fetch_add(&handled, 1);
    errno = saved_errno;
}

static void *allocate_forever(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop)) {
        void *blocks[64];
        for (int i = 0; i < 64; i++)
            blocks[i] = malloc((size_t)(16 + i * 24));
        for (int i = 0; i < 64; i++)
            free(blocks[i]);
    }
    return NULL;
}

static void *dlopen_forever(void *unused)
{
    (void)unused;
    const char *path = getenv("FIXTURE_LIB");
    while (!atomic_load(&stop)) {
        void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (library != NULL)
            dlclose(library);
    }
    return NULL;
}

static void *symbolize_forever(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop)) {
        void *frames[32];
        int count = backtrace(frames, 32);
        free(backtrace_symbols(frames, count));
    }
    return NULL;
}

Test(stress, sigalrm_every_millisecond_while_threads_allocate_and_dlopen, .timeout = 60)
{
    cr_assert_not_null(getenv("FIXTURE_LIB"));
    sink_fd = open("/dev/null", O_WRONLY);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);

    pthread_t threads[3];
    void *(*bodies[3])(void *) = { allocate_forever, dlopen_forever, symbolize_forever };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, bodies[i], NULL), 0);
    struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_REAL, &every_ms, NULL);

    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        {
            void *p = malloc(100);
            free(p);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < LOAD_SECONDS ||
             atomic_load(&handled) < HANDLERS_AT_LEAST);

    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    /* The load lasts until this many handlers ran, however slow the
     * machine (a handler that deadlocks fails by the test's timeout). */
    cr_assert_geq(atomic_load(&handled), HANDLERS_AT_LEAST);
    cr_assert_eq(atomic_load(&empty_traces), 0);
}

/* The same, with the output checked: every line well formed. */
static int check_pipe[2];
static atomic_int alarm_count;

static void on_alarm_to_pipe(int signo)
{
    void *frames[16];
    int saved_errno = errno;
    (void)signo;
    if (atomic_fetch_add(&alarm_count, 1) < 200)
        backtrace_symbols_fd(frames, backtrace(frames, 16), check_pipe[1]);
    errno = saved_errno;
}

Test(stress, lines_written_from_handlers_are_whole, .timeout = 60)
{
    cr_assert_eq(pipe(check_pipe), 0);
    fcntl(check_pipe[1], F_SETPIPE_SZ, 1 << 20);
    signal(SIGALRM, on_alarm_to_pipe);
    pthread_t thread;
    pthread_create(&thread, NULL, allocate_forever, NULL);
    struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_REAL, &every_ms, NULL);
    struct timespec pause = { 0, 1000000 };
    while (atomic_load(&alarm_count) < 200) /* the test's timeout bounds it */
        nanosleep(&pause, NULL);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    close(check_pipe[1]);
    char *text = malloc(1 << 20);
    read_all(check_pipe[0], text, 1 << 20);
    int lines = 0;
    for (char *line = text; *line; lines++) {
        char *end = strchr(line, '\n');
        cr_assert_not_null(end, "unterminated line");
        *end = '\0';
        cr_assert(line[strlen(line) - 1] == ']' && strstr(line, "[0x") != NULL, "%s", line);
        line = end + 1;
    }
    cr_assert_gt(lines, 200);
    free(text);
}
