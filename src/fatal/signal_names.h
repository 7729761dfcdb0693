/* signal_names.h: signals and their si_code values, in words. */
#ifndef EXECINFO_EX_SIGNAL_NAMES_H
#define EXECINFO_EX_SIGNAL_NAMES_H

/* "SIGSEGV", or NULL for a number without a name. Signal-safe. */
const char *signal_name(int signo);

/* "SEGV_MAPERR", "SI_USER"..., or NULL when the code has no name.
 * Signal-safe. */
const char *signal_code_name(int signo, int code);

/* Whether the signal was sent by a process (kill, tgkill, sigqueue) rather
 * than raised by the kernel for a fault. Signal-safe. */
int signal_code_is_sent(int code);

/* Whether the kernel raised it for a fault, with si_addr set. Signal-safe. */
int signal_code_is_fault(int code);

#endif
