/* dump.h: the dump signal's handler (dump_signal=), installed beside the
 * fatal handler. */
#ifndef EXECINFO_EX_DUMP_H
#define EXECINFO_EX_DUMP_H

#include <signal.h>

/* Write a dump of every thread where the crash report goes, and return:
 * the program runs on. Signal-safe. */
void dump_signal_handler(int signo, siginfo_t *info, void *ucontext);

#endif
