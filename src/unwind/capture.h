/* capture.h: internal entry points of the capture module. */
#ifndef EXECINFO_EX_CAPTURE_H
#define EXECINFO_EX_CAPTURE_H

#include <stdint.h>

/* backtrace() under its internal name. Signal-safe. */
int capture_backtrace(void **buffer, int size);

/* backtrace() and backtrace_ucontext(), with EXACT[i] (if not NULL) set to
 * 1 where frame i is an exact pc (an interrupted instruction: frame 0 of a
 * ucontext, the frame after a signal frame) and 0 where it is a return
 * address, to be named by its call. Signal-safe. */
int capture_backtrace_kinds(void **buffer, unsigned char *exact, int size);
int capture_ucontext_kinds(void **buffer, unsigned char *exact, int size, const void *ucontext);

/* The walk from a stack pointer and an exact pc alone (what
 * /proc/PID/task/TID/syscall shows of a blocked thread): as far as each
 * frame's rules need no other register. Signal-safe. */
int capture_registers_kinds(void **buffer, unsigned char *exact, int size, uintptr_t pc,
                            uintptr_t sp);

#endif
