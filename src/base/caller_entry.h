/* caller_entry.h: an exported function whose body, in C, is handed what
 * its entry saw of the caller (struct backtrace_caller), so that a stack
 * captured inside it can start at the caller (backtrace_from_caller)
 * instead of stepping out of every frame of ours first.
 *
 * CALLER_ENTRY(name, body, arguments): before the body runs, the entry
 * makes room for a struct backtrace_caller on its own stack and fills it
 * (the return address, the caller's stack pointer after the return, the
 * frame pointer and the callee-saved register the struct names, which no
 * instruction has changed yet). It then calls BODY with the function's
 * ARGUMENTS (1, 2 or 3 integer arguments) and the struct's address as
 * one more, and returns what BODY returns. BODY must be a hidden global
 * function (the assembly calls it by name, without the PLT). The CFI says
 * where the return address is throughout, so a walk from inside BODY
 * steps through the entry as through any frame. The assembly is one header
 * per architecture (caller_entry_x86_64.h, caller_entry_aarch64.h). */
#ifndef EXECINFO_EX_CALLER_ENTRY_H
#define EXECINFO_EX_CALLER_ENTRY_H

#if defined(__x86_64__)
#include "caller_entry_x86_64.h"
#elif defined(__aarch64__)
#include "caller_entry_aarch64.h"
#else
#error "src/base: x86_64 and aarch64 only; add caller_entry_ARCH.h"
#endif

#define CALLER_ENTRY(name, body, arguments) \
    CALLER_ENTRY_IN(".text", name, body, arguments)

#endif
