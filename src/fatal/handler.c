/* handler.c: the fatal-signal handler: one report, then the death the
 * program would have died without us, or the handler it had before.
 * World: signal-safe (raw syscalls, atomics, static storage; the report
 * is built by pure functions from collected facts).
 *
 * Exactly one thread reports: the first to arrive. The others wait a
 * bounded time for it and then go on (to the previous handler, or to
 * their own death). The gate opens again for the next crash before the
 * program's previous handler is called (it may return, leave by
 * siglongjmp, abort: each time the program goes on or dies on its own),
 * and after the default action when it does not kill. A signal sent while
 * the program ignores it is not reported at all. A fault inside the
 * handler re-enters it on the same thread: that thread then dies at once
 * by the original signal, keeping what was already written. */
#define _GNU_SOURCE
#include "handler.h"
#include "../base/load_touched.h"
#include "crash_facts.h"
#include "report_deliver.h"
#include "report_minidump.h"
#include "signal_frame.h"
#include "../threads/thread_request.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <signal.h>
#include <unistd.h>

#define WAIT_FOR_REPORTER_STEPS 50       /* x 100 ms */

static atomic_int reporter;              /* tid of the reporting thread, 0: none */
static atomic_int original_signal;
static atomic_int report_in_progress;
static atomic_uint reports_written;
static struct crash_facts facts;         /* static: an alternate stack is small */
static struct thread_set threads;
static struct report_request request;
static char output_buffer[4096];
static struct second_stage stage;

static void call_callback(const struct handler_view *view, int fd, int signo,
                          const siginfo_t *info, const void *ucontext)
{
    int format = view->options.format == REPORT_JSON;
    const struct handler_callbacks *callbacks = &view->callbacks;
    if (callbacks->set != NULL)
        callbacks->set(fd, format, signo, info, ucontext, callbacks->set_context);
    for (int i = 0; i < HANDLER_ADDED_CALLBACKS; i++)
        if (callbacks->added[i] != NULL)
            callbacks->added[i](fd, format, signo, info, ucontext, callbacks->added_context[i]);
}

struct callback_call {
    const struct handler_view *view;
    int signo;
    const siginfo_t *info;
    const void *ucontext;
};

/* minidump=: after the report's body, before the callbacks, with every
 * thread report_deliver gathered (still stopped while the middle part is
 * written; threads=1: the crashing thread alone). */
static void write_minidump(int fd, const struct callback_call *call)
{
    const struct options *options = &call->view->options;
    report_minidump(fd, options->format == REPORT_JSON, options, &facts,
                    options->threads > 1 ? &threads : NULL);
}

static int call_lead(int fd, void *opaque)
{
    const struct callback_call *call = opaque;
    const struct handler_callbacks *callbacks = &call->view->callbacks;
    if (callbacks->lead == NULL)
        return BACKTRACE_LEAD_KEEP_TRACE;
    return callbacks->lead(fd, call->view->options.format == REPORT_JSON, call->signo, call->info,
                           call->ucontext, callbacks->lead_context);
}

static void call_callbacks(int fd, void *opaque)
{
    const struct callback_call *call = opaque;
    write_minidump(fd, call);
    call_callback(call->view, fd, call->signo, call->info, call->ucontext);
}

/* Write the report; with KEEP_STOPPED the other threads stay stopped
 * until release_threads (the process dies before that, or goes on). */
static void write_report(const struct handler_view *view, int signo, const siginfo_t *info,
                         const void *ucontext, int keep_stopped)
{
    const struct options *options = &view->options;
    struct callback_call call = { view, signo, info, ucontext };
    request = (struct report_request){
        .options = options, .fd = -1, .json = options->format == REPORT_JSON,
        .middle = call_callbacks, .context = &call, .lead = call_lead,
        .keep_stopped = keep_stopped,
        .threads = &threads, .buffer = output_buffer, .buffer_size = sizeof output_buffer,
        .stage = &stage,
    };
    crash_collect(&facts, signo, info, ucontext, options->frames);
    crash_collect_fault_hints(&facts, options->free_fill);
    report_deliver(&facts, &request);
}

static void set_default_action(int signo)
{
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigaction(signo, &default_action, NULL);
}

/* Restore the default action and make SIGNO pending again for this thread;
 * it is delivered when the handler returns (the mask of the interrupted
 * code is cleared of it), so the exit status and core are the real ones.
 * It is queued with the original siginfo (allowed for a signal to oneself),
 * so that the core and a debugger see SEGV_MAPERR at the fault address,
 * not a tgkill; tgkill only if that is refused or there is no siginfo. */
/* Set by install.c (fatal_handler_queue_plainly in handler.h). */
LOAD_TOUCHED int fatal_handler_queue_plainly;

static void die_by(int signo, const siginfo_t *info, void *ucontext)
{
    set_default_action(signo);
    if (ucontext != NULL)
        sigdelset(&((ucontext_t *)ucontext)->uc_sigmask, signo);
    if (info != NULL && !fatal_handler_queue_plainly) {
        siginfo_t again = *info;
        if (syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), signo, &again) == 0)
            return;
    }
    tgkill(getpid(), gettid(), signo);
}

/* The signals whose default action does not end the process. */
static int default_keeps_running(int signo)
{
    switch (signo) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return 1;
    default:
        return 0;
    }
}

static int is_sent(const siginfo_t *info)
{
    return info == NULL || info->si_code <= 0;
}

/* A vfork child shares our memory: when it reported and died, its tid
 * is left in the gate, where no thread of ours will ever clear it. A
 * gate held by a tid that is not a thread of this process is taken over. */
static int take_over_stale_gate(int holder, int self)
{
    if (holder == 0 || holder == self || tgkill(getpid(), holder, 0) == 0 || errno != ESRCH)
        return 0;
    return atomic_compare_exchange_strong(&reporter, &holder, self);
}

/* The program goes on: the threads the report stopped go on too, then
 * the next crash may report. */
static void reopen_gate(void)
{
    report_deliver_release(&request);
    atomic_store(&reporter, 0);
}

/* Hand over to what was installed before us, or die by default. The
 * reporting thread opens the gate for the next crash when the program
 * goes on: before the previous handler runs, since it may never return
 * here (siglongjmp, or abort(), whose own report must not wait for this
 * one), and after a default action that does not kill. */
static void finish(const struct sigaction *previous, int signo, siginfo_t *info, void *ucontext,
                   int reporting)
{
    /* SIG_IGN and SIG_DFL first: they share storage with sa_sigaction. */
    if (previous->sa_handler == SIG_IGN && is_sent(info)) {
        if (reporting)
            reopen_gate(); /* the program ignored it when sent: it still does */
        return;
    }
    if (previous->sa_handler == SIG_DFL || previous->sa_handler == SIG_IGN) {
        die_by(signo, info, ucontext);
        if (reporting && default_keeps_running(signo))
            reopen_gate();
        return;
    }
    if (previous->sa_flags & SA_RESETHAND)
        set_default_action(signo); /* what the kernel would have done */
    if (reporting)
        reopen_gate();
    if (previous->sa_flags & SA_SIGINFO)
        previous->sa_sigaction(signo, info, ucontext);
    else
        previous->sa_handler(signo);
}

/* Whether finish() will end the process by the default action: then the
 * other threads stay stopped until it dies. */
static int ends_the_process(const struct sigaction *previous, int signo, const siginfo_t *info)
{
    if (previous->sa_handler == SIG_IGN && is_sent(info))
        return 0;
    return (previous->sa_handler == SIG_DFL || previous->sa_handler == SIG_IGN) &&
           !default_keeps_running(signo);
}

/* Wait, boundedly, for the report begun by another thread: until it is
 * written, or the gate reopens (that thread's program went on). */
static void wait_for_reporter(unsigned written_before)
{
    struct timespec step = { 0, 100 * 1000 * 1000 };
    for (int i = 0; i < WAIT_FOR_REPORTER_STEPS; i++) {
        if (atomic_load(&reports_written) != written_before || atomic_load(&reporter) == 0)
            return;
        nanosleep(&step, NULL);
    }
}

/* Whether the kernel filled the siginfo of its signal frame: only if the
 * action still has SA_SIGINFO (someone may have reinstalled us with
 * signal(), which drops it, or installed a plain handler that calls us). */
static int info_is_filled(int signo)
{
    struct sigaction current;
    return sigaction(signo, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO);
}

static _Noreturn void die_now_by_first_signal(void)
{
    int first = atomic_load(&original_signal);
    die_by(first, NULL, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, first);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    _exit(128 + first); /* not reached: the signal kills first */
}

void fatal_signal_handler(int signo, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    int self = gettid(), expected = 0;
    struct handler_view view;
    struct signal_frame frame;

    handler_config_view(signo, &view);
    /* A plain call (the pointer signal() returned) passes no siginfo and
     * no ucontext: what the registers held is not read as if it were. */
    signal_frame_resolve(&frame, signo, info, ucontext, (uintptr_t)__builtin_frame_address(0),
                         info_is_filled(signo));
    info = frame.info;
    ucontext = frame.ucontext;
    /* Ignored when sent: nothing happens to the program, nothing to report. */
    if (view.previous.sa_handler == SIG_IGN && is_sent(info))
        return;
    unsigned written_before = atomic_load(&reports_written);
    int reporting = atomic_compare_exchange_strong(&reporter, &expected, self) ||
                    take_over_stale_gate(expected, self);
    if (reporting) {
        atomic_store(&original_signal, signo);
        atomic_store(&report_in_progress, 1);
        write_report(&view, signo, info, ucontext, ends_the_process(&view.previous, signo, info));
        atomic_store(&report_in_progress, 0);
        atomic_fetch_add(&reports_written, 1);
    } else if (expected == self && atomic_load(&report_in_progress)) {
        die_now_by_first_signal(); /* a fault inside the report */
    } else {
        /* Asked for its context meanwhile, it gives the crash's. */
        thread_request_note_crash(signo, ucontext);
        wait_for_reporter(written_before);
        thread_request_forget_crash();
    }
    /* The previous handler sees the errno of the interrupted code. */
    errno = saved_errno;
    finish(&view.previous, signo, info, ucontext, reporting);
    errno = saved_errno;
}
