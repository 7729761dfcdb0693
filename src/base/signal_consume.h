/* signal_consume.h: take back a signal our own call raised. */
#ifndef EXECINFO_EX_SIGNAL_CONSUME_H
#define EXECINFO_EX_SIGNAL_CONSUME_H

/* Remove SIGNO from the thread's and the process's pending signals, if
 * there, without waiting: a signal that a write of ours raised (SIGPIPE,
 * SIGXFSZ) or a child of ours sent (SIGCHLD) while it was blocked, so
 * that unblocking it does not deliver it to the program. Keeps errno.
 * Signal-safe (rt_sigtimedwait). */
void signal_consume(int signo);

#endif
