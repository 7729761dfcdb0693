/* saved_action.c: a previous signal action kept in 24 bytes, not a
 * sigaction's 152 (handler.h says why).
 * World: signal-safe (sigemptyset is on POSIX's list; memcpy).
 *
 * The mask is copied as one word: glibc's sigset_t starts with the
 * kernel's, signal N at bit N-1 of its first 64 bits, which hold all of
 * Linux's signals. Asking sigismember for each of them cost a preloaded
 * /bin/true 18 K instructions, half of the constructor (issue 26). */
#include "handler.h"

#include <string.h>

_Static_assert(sizeof(sigset_t) >= sizeof(uint64_t), "the kernel's 64 signals lead a sigset_t");

void saved_action_keep(struct saved_action *saved, const struct sigaction *action)
{
    saved->action = action->sa_sigaction;
    saved->flags = action->sa_flags;
    memcpy(&saved->mask, &action->sa_mask, sizeof saved->mask);
}

void saved_action_give(const struct saved_action *saved, struct sigaction *action)
{
    memset(action, 0, sizeof *action);
    action->sa_sigaction = saved->action;
    action->sa_flags = saved->flags;
    sigemptyset(&action->sa_mask);
    memcpy(&action->sa_mask, &saved->mask, sizeof saved->mask);
}
