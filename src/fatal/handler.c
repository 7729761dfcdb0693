/* handler.c: the fatal-signal handler: one report, then the death the
 * program would have died without us, or the handler it had before.
 * World: signal-safe (raw syscalls, atomics, static storage; the report
 * is built by pure functions from collected facts).
 *
 * Exactly one thread reports: the first to arrive. The others wait a
 * bounded time for it and then go on (to the previous handler, or to
 * their own death). A fault inside the handler re-enters it on the same
 * thread: that thread then dies at once by the original signal, keeping
 * what was already written. */
#define _GNU_SOURCE
#include "handler.h"
#include "crash_facts.h"
#include "report.h"
#include "../base/text_out.h"
#include "../symbolize/index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <signal.h>
#include <unistd.h>

#define WAIT_FOR_REPORTER_STEPS 50       /* x 100 ms */

struct handler_config handler_config;

static atomic_int reporter;              /* tid of the reporting thread, 0: none */
static atomic_int original_signal;
static atomic_int report_finished;
static struct crash_facts facts;         /* static: an alternate stack is small */

typedef void callback_function(int, int, int, const void *, const void *, void *);
struct callback {
    callback_function *function;
    void *context;
};
static _Atomic(struct callback *) current_callback;
static struct callback callbacks[2];     /* the one in use, and the next */
static int next_callback;

/* Normal world, serialised by the installer's lock: a handler running now
 * keeps the callback it loaded. */
void handler_set_callback(callback_function *function, void *context)
{
    struct callback *slot = &callbacks[next_callback];
    next_callback ^= 1;
    slot->function = function;
    slot->context = context;
    atomic_store(&current_callback, function != NULL ? slot : NULL);
}

static void call_callback(int fd, int signo, const siginfo_t *info, const void *ucontext)
{
    struct callback *callback = atomic_load(&current_callback);
    int format = handler_config.options.format == REPORT_JSON;
    if (callback != NULL && callback->function != NULL)
        callback->function(fd, format, signo, info, ucontext, callback->context);
}
static char output_buffer[4096];

static int open_destination(void)
{
    const struct options *options = &handler_config.options;
    if (options->report[0] == '\0')
        return STDERR_FILENO;
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_APPEND;
    flags |= options->overwrite ? O_TRUNC : O_EXCL;
    int fd = open(options->report, flags, 0600);
    return fd >= 0 ? fd : STDERR_FILENO; /* a report on stderr beats none */
}

static void write_report(int signo, const siginfo_t *info, const void *ucontext)
{
    const struct options *options = &handler_config.options;
    struct report_settings settings = { options->registers, options->modules };
    struct text_out out;

    crash_collect(&facts, signo, info, ucontext, options->frames);
    int fd = open_destination();
    text_out_init_fd(&out, fd, output_buffer, sizeof output_buffer);
    const struct index_snapshot *snapshot = index_acquire();
    if (options->format == REPORT_JSON)
        report_json(&out, &facts, snapshot, &settings);
    else
        report_text(&out, &facts, snapshot, &settings);
    index_release();
    text_out_flush(&out);
    call_callback(fd, signo, info, ucontext);
    if (options->format == REPORT_JSON)
        report_json_end(&out);
    else
        report_text_end(&out);
    text_out_flush(&out);
    if (fd != STDERR_FILENO)
        close(fd);
}

/* Restore the default action and make SIGNO pending again for this thread;
 * it is delivered when the handler returns (the mask of the interrupted
 * code is cleared of it), so the exit status and core are the real ones. */
static void die_by(int signo, void *ucontext)
{
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigaction(signo, &default_action, NULL);
    if (ucontext != NULL)
        sigdelset(&((ucontext_t *)ucontext)->uc_sigmask, signo);
    tgkill(getpid(), gettid(), signo);
}

/* Hand over to what was installed before us, or die by default. */
static void finish(int signo, siginfo_t *info, void *ucontext)
{
    const struct sigaction *previous = &handler_config.previous[signo];
    int sent = info == NULL || info->si_code <= 0;

    /* SIG_IGN and SIG_DFL first: they share storage with sa_sigaction. */
    if (previous->sa_handler == SIG_IGN && sent)
        return; /* the program ignored it when sent: it still does */
    if (previous->sa_handler == SIG_DFL || previous->sa_handler == SIG_IGN) {
        die_by(signo, ucontext);
        return;
    }
    if (previous->sa_flags & SA_RESETHAND) {
        /* What the kernel would have done: a second signal kills. */
        struct sigaction default_action;
        memset(&default_action, 0, sizeof default_action);
        default_action.sa_handler = SIG_DFL;
        sigaction(signo, &default_action, NULL);
    }
    if (previous->sa_flags & SA_SIGINFO)
        previous->sa_sigaction(signo, info, ucontext);
    else
        previous->sa_handler(signo);
}

static void wait_for_reporter(void)
{
    struct timespec step = { 0, 100 * 1000 * 1000 };
    for (int i = 0; i < WAIT_FOR_REPORTER_STEPS && !atomic_load(&report_finished); i++)
        nanosleep(&step, NULL);
}

/* Whether the kernel filled INFO: only if the action still has SA_SIGINFO
 * (someone may have reinstalled us with signal(), which drops it). */
static siginfo_t *usable_info(int signo, siginfo_t *info)
{
    struct sigaction current;
    if (sigaction(signo, NULL, &current) != 0 || !(current.sa_flags & SA_SIGINFO))
        return NULL;
    return info;
}

void fatal_signal_handler(int signo, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    int self = gettid(), expected = 0;

    info = usable_info(signo, info);
    if (atomic_compare_exchange_strong(&reporter, &expected, self)) {
        atomic_store(&original_signal, signo);
        write_report(signo, info, ucontext);
        atomic_store(&report_finished, 1);
    } else if (expected == self && !atomic_load(&report_finished)) {
        /* A fault inside the report: die by the first signal, now. */
        int first = atomic_load(&original_signal);
        die_by(first, NULL);
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, first);
        sigprocmask(SIG_UNBLOCK, &unblock, NULL);
        _exit(128 + first); /* not reached: the signal kills first */
    } else {
        wait_for_reporter();
    }
    /* The previous handler sees the errno of the interrupted code. */
    errno = saved_errno;
    finish(signo, info, ucontext);
    errno = saved_errno;
}
