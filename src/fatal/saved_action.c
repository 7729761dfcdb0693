/* saved_action.c: a previous signal action kept in 24 bytes, not a
 * sigaction's 152 (handler.h says why).
 * World: signal-safe (sigemptyset, sigaddset and sigismember are on
 * POSIX's list). */
#include "handler.h"

#include <string.h>

void saved_action_keep(struct saved_action *saved, const struct sigaction *action)
{
    saved->action = action->sa_sigaction;
    saved->flags = action->sa_flags;
    saved->mask = 0;
    for (int signo = 1; signo < HANDLER_SIGNALS; signo++)
        if (sigismember(&action->sa_mask, signo) == 1)
            saved->mask |= (uint64_t)1 << (signo - 1);
}

void saved_action_give(const struct saved_action *saved, struct sigaction *action)
{
    memset(action, 0, sizeof *action);
    action->sa_sigaction = saved->action;
    action->sa_flags = saved->flags;
    sigemptyset(&action->sa_mask);
    for (int signo = 1; signo < HANDLER_SIGNALS; signo++)
        if (saved->mask & ((uint64_t)1 << (signo - 1)))
            sigaddset(&action->sa_mask, signo);
}
