/* thread_emulator.h: the threads qemu-user runs inside the process, told
 * apart from the program's own. */
#ifndef EXECINFO_EX_THREAD_EMULATOR_H
#define EXECINFO_EX_THREAD_EMULATOR_H

#include <sys/types.h>

/* Removes from TIDS (COUNT of them, order kept) the threads that are
 * qemu-user's own, not the program's; returns how many are left. A no-op
 * outside qemu-user. Signal-safe (open, read, close). */
int thread_emulator_leave_out(pid_t *tids, int count);

#endif
