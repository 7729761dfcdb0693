/* The installer's settings as the handler sees them: never half of one
 * publish and half of another, from another thread or from a signal that
 * interrupted the publishing thread itself. */
#define _GNU_SOURCE
#include "fatal/handler.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "support.h"

#define PUBLISHES 20000

static atomic_int torn, views, done;

/* Every field of a publish carries the same mark. */
static void publish_marked(struct handler_config *config, int mark)
{
    config->options.frames = mark;
    for (int signo = 0; signo < HANDLER_SIGNALS; signo++)
        config->previous[signo].sa_flags = mark;
    config->callbacks.set_context = (void *)(intptr_t)mark;
    handler_config_publish(config);
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
    while (!atomic_load(&done))
        check_one_view();
    return NULL;
}

static void on_timer(int signo)
{
    (void)signo;
    check_one_view();
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
    for (int mark = 2; mark < PUBLISHES; mark++)
        publish_marked(&config, mark);
    atomic_store(&done, 1);
    pthread_join(thread, NULL);
    timer_delete(timer);
    cr_assert_eq(atomic_load(&torn), 0, "%d of %d views were torn", torn, views);
    cr_assert_gt(atomic_load(&views), 1000);
    struct handler_view last;
    handler_config_view(SIGUSR1, &last);
    cr_assert_eq(last.options.frames, PUBLISHES - 1);
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
