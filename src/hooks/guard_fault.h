/* guard_fault.h: what a fault in the guard pool says (guard_pages=1): the
 * crash report's heap section leads with it. Signal-safe. */
#ifndef EXECINFO_EX_GUARD_FAULT_H
#define EXECINFO_EX_GUARD_FAULT_H

#include <stdint.h>

#include "heap_report.h"

struct guard_fault {
    enum heap_error kind;      /* HEAP_OVERFLOW, HEAP_UNDERFLOW, HEAP_USE_AFTER_FREE */
    uintptr_t address, block;
    size_t size;
    long offset;               /* address - block */
    stack_id alloc_stack, free_stack;
};

/* 1 and *FACTS when ADDRESS is in a guarded slot's guard page or a freed
 * slot's pages; 0 otherwise. Signal-safe. */
int guard_fault_facts(uintptr_t address, struct guard_fault *facts);

/* The crash's heap section's first part: for a SIGSEGV or SIGBUS whose
 * address guard_fault_facts knows, the heap error found at the access,
 * its block and stacks, in text or JSON (a "heap_guard_fault" member).
 * Returns 1 when it wrote one. Signal-safe. */
int guard_fault_section(int fd, int format, int signo, const void *siginfo);

#endif
