/* segv_owner.c: sigaction and signal, passed on to glibc's. A program
 * that puts its own SIGSEGV action in place of the crash report's while
 * guard pages are on (guard_pages=, sample=) is told once, on stderr,
 * what it changes: a guard page's fault is then reported only if the
 * program's handler passes the signal on to the action it replaced
 * (docs/DECISIONS.md, "A guard page's fault when the program owns
 * SIGSEGV"). The program's action is installed as it asked, always.
 * World: signal-safe (both may be called in a handler): glibc's own
 * calls, compares, one write. */
#define _GNU_SOURCE
#include "heap.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

/* glibc's: sigaction's implementation, and signal()'s under its other
 * name (the same function: BSD semantics). */
extern int __sigaction(int signo, const struct sigaction *action, struct sigaction *old);
extern __sighandler_t bsd_signal(int signo, __sighandler_t handler);

static _Atomic int said;

static int is_ours(const struct sigaction *action)
{
    return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == heap.fatal_handler;
}

/* The libraries' own calls (the handler's install, chaining and
 * uninstall) are no program's. */
static int from_us(uintptr_t caller)
{
    return (caller >= heap.own_start && caller < heap.own_end) ||
           (caller >= heap.core_start && caller < heap.core_end);
}

static void note(int signo, const struct sigaction *before, const struct sigaction *after,
                 uintptr_t caller)
{
    static const char text[] =
        "execinfo_ex: the program replaced the crash report's SIGSEGV handler with its own: a "
        "guard page's fault is reported only if that handler passes the signal on to the one "
        "it replaced (said once)\n";
    if (signo != SIGSEGV || heap.fatal_handler == NULL ||
        (heap.options.guard_pages == 0 && heap.options.sample == 0))
        return;
    if (!is_ours(before) || is_ours(after) || from_us(caller))
        return;
    if (atomic_exchange(&said, 1) != 0)
        return;
    ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
    (void)ignored;
}

__attribute__((visibility("default")))
int sigaction(int signo, const struct sigaction *action, struct sigaction *old)
{
    struct sigaction before;
    int result = __sigaction(signo, action, &before);
    if (result != 0)
        return result;
    if (action != NULL)
        note(signo, &before, action, (uintptr_t)__builtin_return_address(0));
    if (old != NULL)
        *old = before;
    return 0;
}

__attribute__((visibility("default")))
__sighandler_t signal(int signo, __sighandler_t handler)
{
    struct sigaction before, after;
    int known = __sigaction(signo, NULL, &before) == 0;
    __sighandler_t previous = bsd_signal(signo, handler);
    if (known && previous != SIG_ERR && __sigaction(signo, NULL, &after) == 0)
        note(signo, &before, &after, (uintptr_t)__builtin_return_address(0));
    return previous;
}
