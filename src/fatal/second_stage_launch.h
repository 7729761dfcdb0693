/* second_stage_launch.h: a program started from a signal handler, given
 * a request on its stdin, its answer read from its stdout, all within one
 * deadline; then it is killed if still there, and reaped. */
#ifndef EXECINFO_EX_SECOND_STAGE_LAUNCH_H
#define EXECINFO_EX_SECOND_STAGE_LAUNCH_H

#include <stddef.h>

#include "second_stage.h"

struct stage_exchange {
    const char *program;
    const char *request;
    size_t request_length;
    char *answer;             /* the caller's buffer */
    size_t answer_capacity;
    size_t answer_length;     /* out */
    int timeout_ms;
    int error;                /* out: an errno (pipe, clone, execve) */
    int wait_status;          /* out: wait4's; -1: not known (reaped by someone else) */
    /* Where a program whose answer ended with "end" is left, unreaped
     * and with SIGCHLD still blocked, for stage_exchange_reap after the
     * report (wait_status then -1); NULL: reaped before the return. */
    struct stage_child *leave;
};

/* Run the exchange. Returns SECOND_STAGE_ANSWERED when the program's
 * stdout ended (or its answer ended with "end") in time, with its exit
 * status; else why not (second_stage.h: PIPE_FAILED, START_FAILED,
 * EXEC_FAILED, TIMED_OUT). The child is started with a raw clone (not
 * fork(): no atfork handlers, no malloc locks), its signal mask cleared,
 * stderr to /dev/null, an environment of the few variables it reads
 * (HOME, XDG_CACHE_HOME, EXECINFO_EX_OPTIONS, the debug roots), as they
 * were at install.
 * Signal-safe. */
enum second_stage_outcome stage_exchange_run(struct stage_exchange *exchange);

/* The program left in CHILD by stage_exchange_run given until its
 * deadline to end, then killed, reaped (*WAIT_STATUS: wait4's, -1 when
 * someone else reaped it), and the signal mask restored. Nothing when
 * CHILD holds none (*WAIT_STATUS untouched). Signal-safe. */
void stage_exchange_reap(struct stage_child *child, int *wait_status);

/* The symbolizer's environment, set at install (install.c): cleared, then
 * NAME=VALUE added for each variable it reads; what does not fit in
 * STAGE_ENVIRONMENT_BYTES is left out. Not MT-Safe: under the install's
 * lock. */
#define STAGE_ENVIRONMENT_BYTES 4096
void stage_environment_clear(void);
void stage_environment_add(const char *name, const char *value);

#endif
