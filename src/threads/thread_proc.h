/* thread_proc.h: what /proc/self/task/TID says of one thread. */
#ifndef EXECINFO_EX_THREAD_PROC_H
#define EXECINFO_EX_THREAD_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* Its name (NAME holds 16 bytes) and state letter, from .../stat.
 * Returns 0, or -ENOENT when the thread is gone. Signal-safe. */
int thread_proc_stat(pid_t tid, char *name, char *state);

/* From .../status: the signals it blocks (SigBlk) and those pending at
 * it alone (SigPnd), bit N - 1 for signal N, as the kernel numbers them.
 * Returns 0 or a negative errno (-ENOENT: gone). Signal-safe. */
int thread_proc_signal_masks(pid_t tid, uint64_t *blocked, uint64_t *pending);

/* From .../status: 1 if it blocks SIGNO with SIGNO pending at it (so it
 * cannot take it: a thread inside a handler of SIGNO blocks it too, with
 * nothing pending), 2 if so and it blocks every signal that can be
 * blocked, 0 otherwise, or a negative errno. Signal-safe. */
int thread_proc_blocks(pid_t tid, int signo);

/* From .../syscall: the syscall it is in (-1: in user space, stopped),
 * its stack pointer and pc. Returns 0, or -EAGAIN when it is running (the
 * kernel shows nothing then), or another negative errno. Signal-safe. */
int thread_proc_syscall(pid_t tid, long *number, uintptr_t *sp, uintptr_t *pc);

#endif
