/* The installer's settings as the handler sees them: never half of one
 * publish and half of another, from another thread or from a signal that
 * interrupted the publishing thread itself. */
#define _GNU_SOURCE
#include "fatal/handler.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

/* The test publishes until the views that could have been torn number
 * this many, however fast or loaded the machine: a view from the reader
 * thread that overlapped a publish, a view from a signal that interrupted
 * one on the writer's own thread. Bounded by the test's timeout. */
#define PUBLISHES_AT_LEAST 20000
#define THREAD_VIEWS_DURING_A_PUBLISH 1000
#define SIGNAL_VIEWS_INSIDE_A_PUBLISH 100

static atomic_int torn, views, done;
static atomic_long publishes_started, publishes_done;
static atomic_int thread_views_during_a_publish, signal_views_inside_a_publish;
static volatile sig_atomic_t publishing;   /* the writer's thread, seen by its signals */

/* Every field of a publish carries the same mark. */
static void publish_marked(struct handler_config *config, int mark)
{
    config->options.frames = mark;
    for (int signo = 0; signo < HANDLER_SIGNALS; signo++)
        config->previous[signo].flags = mark;
    config->callbacks.set_context = (void *)(intptr_t)mark;
    atomic_fetch_add(&publishes_started, 1);
    publishing = 1;
    atomic_signal_fence(memory_order_seq_cst);
    handler_config_publish(config);
    atomic_signal_fence(memory_order_seq_cst);
    publishing = 0;
    atomic_fetch_add(&publishes_done, 1);
}

static void check_one_view(void)
{
    struct handler_view view;
    handler_config_view(SIGUSR1, &view);
    int mark = view.options.frames;
    if (view.previous.sa_flags != mark || view.callbacks.set_context != (void *)(intptr_t)mark)
        atomic_fetch_add(&torn, 1);
    atomic_fetch_add(&views, 1);
}

static void *reader(void *unused)
{
    (void)unused;
    while (!atomic_load(&done)) {
        long done_before = atomic_load(&publishes_done);
        check_one_view();
        /* A publish began before the view ended and ended after it began. */
        if (atomic_load(&publishes_started) > done_before)
            atomic_fetch_add(&thread_views_during_a_publish, 1);
    }
    return NULL;
}

static void on_timer(int signo)
{
    (void)signo;
    if (publishing)
        atomic_fetch_add(&signal_views_inside_a_publish, 1);
    check_one_view();
}

static int enough_views(int mark)
{
    return mark >= PUBLISHES_AT_LEAST &&
           atomic_load(&thread_views_during_a_publish) >= THREAD_VIEWS_DURING_A_PUBLISH &&
           atomic_load(&signal_views_inside_a_publish) >= SIGNAL_VIEWS_INSIDE_A_PUBLISH;
}

Test(handler_config, views_are_never_torn_across_threads_or_signals, .timeout = 60)
{
    static struct handler_config config;
    publish_marked(&config, 1);
    signal(SIGUSR2, on_timer);
    /* A timer that interrupts this thread, the writer, while it publishes. */
    struct sigevent event = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2 };
    event._sigev_un._tid = gettid();
    timer_t timer;
    cr_assert_eq(timer_create(CLOCK_MONOTONIC, &event, &timer), 0);
    struct itimerspec every = { { 0, 20000 }, { 0, 20000 } };
    cr_assert_eq(timer_settime(timer, 0, &every, NULL), 0);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, reader, NULL), 0);
    int mark = 2;
    for (;; mark++) {
        publish_marked(&config, mark);
        if (enough_views(mark))
            break;
    }
    atomic_store(&done, 1);
    pthread_join(thread, NULL);
    timer_delete(timer);
    signal(SIGUSR2, SIG_IGN);
    cr_assert(enough_views(mark));
    cr_assert_eq(atomic_load(&torn), 0, "%d of %d views were torn (%d during a publish on "
                 "another thread, %d from a signal inside one)", atomic_load(&torn),
                 atomic_load(&views), atomic_load(&thread_views_during_a_publish),
                 atomic_load(&signal_views_inside_a_publish));
    struct handler_view last;
    handler_config_view(SIGUSR1, &last);
    cr_assert_eq(last.options.frames, mark);
}

Test(handler_config, a_bad_signal_number_reads_a_valid_entry)
{
    static struct handler_config config;
    publish_marked(&config, 7);
    struct handler_view view;
    handler_config_view(-3, &view);
    cr_assert_eq(view.options.frames, 7);
    handler_config_view(HANDLER_SIGNALS + 5, &view);
    cr_assert_eq(view.previous.sa_flags, 7);
}

/* ---- never older than the last publish ---- */

/* The second copy is written from the second publish on (handler_config.c):
 * until then a reader sent to it would find it zeroed. A view may be of
 * the publish under way or of the last one finished, never of an older
 * one: each child process publishes marks 1 to 4 while a thread views,
 * from before the first publish on, and counts views older than the
 * publishes finished before they began. The window is a copy of 3 KiB, so
 * many short processes, each the first to publish in its own memory
 * (without the copy, 2 of 300 processes saw one). */
#define STALE_CHILDREN 1000
#define STALE_PUBLISHES 4

static atomic_int stale_views, child_viewing, child_done;
static atomic_long child_publishes_done;

static void *stale_reader(void *unused)
{
    (void)unused;
    atomic_store(&child_viewing, 1);
    while (!atomic_load(&child_done)) {
        long done_before = atomic_load(&child_publishes_done);
        struct handler_view view;
        handler_config_view(SIGUSR1, &view);
        if (view.options.frames < done_before)
            atomic_fetch_add(&stale_views, 1);
    }
    return NULL;
}

static int publish_while_viewed(void)
{
    static struct handler_config config;
    pthread_t thread;
    if (pthread_create(&thread, NULL, stale_reader, NULL) != 0)
        return 2;
    while (!atomic_load(&child_viewing))
        ;
    for (int mark = 1; mark <= STALE_PUBLISHES; mark++) {
        config.options.frames = mark;
        handler_config_publish(&config);
        atomic_store(&child_publishes_done, mark);
    }
    atomic_store(&child_done, 1);
    pthread_join(thread, NULL);
    return atomic_load(&stale_views) != 0;
}

Test(handler_config, a_view_is_never_older_than_the_last_publish, .timeout = 120)
{
    int stale_children = 0, failed_children = 0;
    for (int child = 0; child < STALE_CHILDREN; child++) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
            _exit(publish_while_viewed());
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "child %d: status %#x", child, status);
        stale_children += WEXITSTATUS(status) == 1;
        failed_children += WEXITSTATUS(status) == 2;
    }
    cr_assert_eq(failed_children, 0, "pthread_create failed in %d children", failed_children);
    cr_assert_eq(stale_children, 0, "%d of %d processes saw a view older than the last publish",
                 stale_children, STALE_CHILDREN);
}
