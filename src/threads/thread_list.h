/* thread_list.h: the threads of this process, from /proc/self/task. */
#ifndef EXECINFO_EX_THREAD_LIST_H
#define EXECINFO_EX_THREAD_LIST_H

#include <sys/types.h>

/* The CAPACITY smallest thread ids of the process but SKIP, ascending,
 * into TIDS; *SEEN gets how many threads were listed in all (SKIP too).
 * Returns how many were stored, or a negative errno if /proc/self/task
 * cannot be read. Signal-safe (open, getdents64, close; no malloc). */
int thread_list_tids(pid_t *tids, int capacity, pid_t skip, int *seen);

#endif
