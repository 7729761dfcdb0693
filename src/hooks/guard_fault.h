/* guard_fault.h: what a fault in the guard pool says (guard_pages=1,
 * sample=N): the crash report leads with it, as a heap error found at
 * the access. Signal-safe. */
#ifndef EXECINFO_EX_GUARD_FAULT_H
#define EXECINFO_EX_GUARD_FAULT_H

#include <stdint.h>

/* 1 and *ADDRESS for a SIGSEGV or SIGBUS the kernel raised with a fault
 * address (not SI_KERNEL, a general-protection fault, whose si_addr is
 * 0); 0 otherwise. Signal-safe. */
int guard_fault_address(int signo, const void *siginfo, uintptr_t *address);

/* For a fault whose address is in a guarded slot's guard page or in a
 * freed slot's pages: the heap error found at the access, in the report's
 * FORMAT (text lines, or a ,"heap_error":{...} member), with the access
 * (READ or WRITE, its size) and its stack from SIGINFO and UCONTEXT, then
 * the block's freed-by and allocated-by stacks and the SUMMARY line.
 * Returns 1 when it wrote one, 0 for any other signal or address.
 * Signal-safe; one reporting thread at a time (the fatal handler's). */
int guard_fault_report(int fd, int format, int signo, const void *siginfo, const void *ucontext);

#endif
