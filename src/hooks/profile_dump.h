/* profile_dump.h: heap profiles on the dump signal (dump_signal= with
 * profile=), written by a thread of the hook layer's own. */
#ifndef EXECINFO_EX_PROFILE_DUMP_H
#define EXECINFO_EX_PROFILE_DUMP_H

#include <signal.h>

/* Start the writing thread and put the signal's handler in front of the
 * one installed now (the core library's dump), when both options are set.
 * World: normal; from the hook layer's constructor, after the fatal
 * handler was installed. */
void profile_dump_start(void);

/* Take SIGNO (its present action chained to) and write a byte to FD for
 * each one, in this process only. Returns 0 or a negative errno.
 * World: normal (sigaction); the handler it installs is signal-safe. */
int profile_dump_signal_install(int signo, int fd);

#endif
