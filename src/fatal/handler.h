/* handler.h: the fatal-signal handler and what the installer gives it. */
#ifndef EXECINFO_EX_FATAL_HANDLER_H
#define EXECINFO_EX_FATAL_HANDLER_H

#include <signal.h>
#include <stdint.h>

#include "../base/options.h"

#define HANDLER_SIGNALS 65

/* backtrace_set_crash_lead's (execinfo_ex.h). */
typedef int handler_lead(int fd, int format, int signo, const void *siginfo,
                         const void *ucontext, void *context);

typedef void handler_callback(int fd, int format, int signo, const void *siginfo,
                              const void *ucontext, void *context);

/* The program's callback (backtrace_set_crash_callback) and those that
 * libraries added (backtrace_add_crash_callback), called in that order. */
#define HANDLER_ADDED_CALLBACKS 4

struct handler_callbacks {
    handler_callback *set;
    void *set_context;
    handler_callback *added[HANDLER_ADDED_CALLBACKS];
    void *added_context[HANDLER_ADDED_CALLBACKS];
    handler_lead *lead;        /* backtrace_set_crash_lead, first in the report */
    void *lead_context;
};

/* A previous action, as the handler needs it again (saved_action.c). Not
 * a struct sigaction: glibc's holds a mask of 1024 signals (152 bytes; the
 * kernel's has 64), and the config below holds one for each signal and is
 * published twice, so they were 30 of its 35 KiB that every process's
 * install wrote: nine pages touched at load for nothing. */
struct saved_action {
    void (*action)(int, siginfo_t *, void *); /* sa_sigaction, in sa_handler's place too */
    uint64_t mask;                            /* bit N-1: signal N */
    int flags;
};

/* ACTION kept in SAVED, and SAVED given back as a sigaction. Signal-safe. */
void saved_action_keep(struct saved_action *saved, const struct sigaction *action);
void saved_action_give(const struct saved_action *saved, struct sigaction *action);

/* What the installer sets up: kept by it, published to the handler. */
struct handler_config {
    struct options options;
    struct saved_action previous[HANDLER_SIGNALS];
    uint64_t installed;                /* bit n: we own signal n */
    struct handler_callbacks callbacks;
};

/* What the handling of one signal needs, copied at its start, so that an
 * install, uninstall or new callback meanwhile cannot change it midway. */
struct handler_view {
    struct options options;
    struct sigaction previous;         /* for this signal */
    struct handler_callbacks callbacks;
};

/* Publish CONFIG to the handler. Normal world, one writer at a time (the
 * installer's lock); a handler never waits for it and never sees half of
 * it, even when it interrupted this very call. */
void handler_config_publish(const struct handler_config *config);

/* The installer's own config, which it changes under its lock and then
 * publishes: kept beside the published copies (handler_config.c). */
struct handler_config *handler_config_draft(void);

/* Copy from the latest published config what handling SIGNO needs.
 * Signal-safe, wait-free. */
void handler_config_view(int signo, struct handler_view *view);

/* The SA_SIGINFO handler. Signal-safe. */
void fatal_signal_handler(int signo, siginfo_t *info, void *ucontext);

/* Whether dying sends the signal plainly (tgkill) rather than queued with
 * the fault's siginfo: under qemu-user (install.c says why). Set in the
 * normal world before the handler is installed. */
extern int fatal_handler_queue_plainly;

#endif
