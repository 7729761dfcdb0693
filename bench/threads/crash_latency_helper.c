/* crash_latency_helper.c: a process of N threads for
 * bench/threads/crash_latency.c (issue 23's every-thread report).
 *
 *     crash_latency_helper FD crash|live N OPTIONS
 *     crash_latency_helper FD probe 0 OPTIONS
 *
 * FD is the shared page (crowd_page.h). The helper installs the fatal
 * handler with OPTIONS (backtrace_install_fatal_handler) and a crash
 * callback, then makes N - 1 threads with 64 KiB stacks, each of which
 * calls down three levels of its own (wait_level1..3, noipa, with work
 * after the call so that each is a real frame) and waits in
 * pthread_cond_wait on a condition that never comes. Once every one of
 * them is in the wait (counted in under the mutex, then its state in
 * /proc/self/task/TID/stat is S), the helper stores ready_ns, sets
 * `ready` and wakes the parent.
 *
 *   crash  main calls down three levels (crash_level1..3), stores t0 and
 *          writes to address 64: SIGSEGV. The callback, which the handler
 *          calls after the report's body and before its end line, stores
 *          t1 first.
 *   live   main goes down the same three wait levels as the others and
 *          waits too; the parent then signals it (dump_signal= in
 *          OPTIONS), or attaches eu-stack or gdb to it, and kills it.
 *   probe  exits 0 if the handler accepts OPTIONS, 1 if not (to ask
 *          whether this build knows an option, e.g. minidump=).
 *
 * The helper dies with its parent (PR_SET_PDEATHSIG).
 *
 * A diagnostic, not part of the tables: with BENCH_PREWALK=1 in the
 * environment, each extra thread calls backtrace() once before it waits,
 * so that the walker already knows that thread's stack mapping when the
 * request comes (otherwise each thread's first walk, the one in the
 * request's handler, looks it up in /proc/self/maps). */
#define _GNU_SOURCE
#include "crowd_page.h"
#include "../timing.h"

#include <dirent.h>
#include <execinfo_ex.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREAD_STACK (64 * 1024)

static struct crowd_page *page;
static int *volatile fault_address = (int *)64; /* in the unmapped first page */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;      /* never signalled */
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static int waiting, wanted, released;
static volatile int sink;

static void on_crash(int fd, int format, int signo, const void *siginfo, const void *ucontext,
                     void *context)
{
    (void)fd, (void)format, (void)signo, (void)siginfo, (void)ucontext, (void)context;
    page->callback_ns = now_ns();
    page->callback_calls++;
}

static void wait_forever(void)
{
    pthread_mutex_lock(&lock);
    if (++waiting == wanted)
        pthread_cond_signal(&all_in);
    while (!released)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
}

__attribute__((noipa)) static int wait_level3(int x)
{
    wait_forever();
    sink = x;
    return x + 1;
}

__attribute__((noipa)) static int wait_level2(int x)
{
    int r = wait_level3(x + 1);
    sink = r;
    return r + 1;
}

__attribute__((noipa)) static int wait_level1(int x)
{
    int r = wait_level2(x + 1);
    sink = r;
    return r + 1;
}

static int prewalk; /* BENCH_PREWALK=1 in the environment */

static void *thread_main(void *unused)
{
    (void)unused;
    if (prewalk) {
        void *frames[8];
        backtrace(frames, 8);
    }
    wait_level1(0);
    return NULL;
}

__attribute__((noipa)) static int crash_level3(int x)
{
    page->fault_ns = now_ns();
    *fault_address = x;
    return x + 1;
}

__attribute__((noipa)) static int crash_level2(int x)
{
    int r = crash_level3(x + 1);
    sink = r;
    return r + 1;
}

__attribute__((noipa)) static int crash_level1(int x)
{
    int r = crash_level2(x + 1);
    sink = r;
    return r + 1;
}

/* Every thread but the caller sleeping (S) by /proc/self/task/TID/stat:
 * in the kernel's futex wait, not on its way there. */
static int all_others_sleep(void)
{
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *entry;
    int running = 0;
    pid_t self = (pid_t)syscall(SYS_gettid);
    if (tasks == NULL)
        return 1;
    while ((entry = readdir(tasks)) != NULL && !running) {
        if (entry->d_name[0] == '.' || atoi(entry->d_name) == self)
            continue;
        char path[300], text[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", entry->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, text, sizeof text - 1);
        close(fd);
        if (got <= 0)
            continue;
        text[got] = '\0';
        const char *paren = strrchr(text, ')');
        running = paren == NULL || paren[1] != ' ' || paren[2] != 'S';
    }
    closedir(tasks);
    return !running;
}

/* Tell the parent; WAKE 0: the parent of a crash does not wait for
 * this, so that its wakeup does not run inside the timed crash. */
static void announce(uint32_t value, int wake)
{
    page->ready_ns = now_ns();
    __atomic_store_n(&page->ready, value, __ATOMIC_RELEASE);
    if (wake)
        syscall(SYS_futex, &page->ready, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 5 || (page = crowd_page_map(atoi(argv[1]))) == NULL)
        return 2;
    const char *mode = argv[2];
    int threads = atoi(argv[3]);
    if (strcmp(mode, "probe") == 0)
        return backtrace_install_fatal_handler(argv[4]) == 0 ? 0 : 1;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (threads < 1 || backtrace_install_fatal_handler(argv[4]) != 0) {
        page->status = 3;
        announce((uint32_t)-1, 1);
        return 3;
    }
    backtrace_set_crash_callback(on_crash, NULL);
    prewalk = getenv("BENCH_PREWALK") != NULL && atoi(getenv("BENCH_PREWALK")) == 1;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, THREAD_STACK);
    wanted = threads - 1;
    for (int i = 0; i < threads - 1; i++) {
        pthread_t thread;
        if (pthread_create(&thread, &attributes, thread_main, NULL) != 0) {
            page->status = 4;
            announce((uint32_t)-1, 1);
            return 4;
        }
    }
    pthread_mutex_lock(&lock);
    while (waiting < wanted)
        pthread_cond_wait(&all_in, &lock);
    pthread_mutex_unlock(&lock);
    for (int tries = 0; !all_others_sleep() && tries < 1000; tries++)
        usleep(1000);
    if (strcmp(mode, "crash") == 0) {
        announce(1, 0);
        crash_level1(0);
        return 5; /* not reached */
    }
    wanted++; /* main waits too, with the same frames */
    announce(1, 1);
    wait_level1(0);
    return 0;
}
