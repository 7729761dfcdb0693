/* handler.h: the fatal-signal handler and what the installer gives it. */
#ifndef EXECINFO_EX_FATAL_HANDLER_H
#define EXECINFO_EX_FATAL_HANDLER_H

#include <signal.h>
#include <stdint.h>

#include "../base/options.h"

#define HANDLER_SIGNALS 65

/* Written by the installer before it installs the handler, read by the
 * handler: never changed while the handler may run. */
struct handler_config {
    struct options options;
    struct sigaction previous[HANDLER_SIGNALS];
    uint64_t installed;                /* bit n: we own signal n */
};

/* The crash reporter's callback: set at any time, so read atomically. */
void handler_set_callback(void (*callback)(int, int, int, const void *, const void *, void *),
                          void *context);

extern struct handler_config handler_config;

/* The SA_SIGINFO handler. Signal-safe. */
void fatal_signal_handler(int signo, siginfo_t *info, void *ucontext);

#endif
