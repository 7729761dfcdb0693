/* jump_entry.h: an exported function that decides where a call goes, then
 * jumps there with the caller's return address in place.
 *
 * glibc's dlopen and dlmopen look at their return address to find the
 * calling module (a bare name is searched along its RUNPATH, $ORIGIN is
 * its directory, the new module joins its namespace): a wrapper in C that
 * calls them makes itself the caller, unless the compiler happens to turn
 * the call into a jump. JUMP_ENTRY(name, router, which, unavailable)
 * saves the first three argument registers and the return address into a
 * struct jump_entry_call on its stack, calls ROUTER(call, WHICH), which
 * returns the function to go on to (NULL: UNAVAILABLE, which returns what
 * the call returns on failure) and may change the saved arguments, then
 * restores the registers from the struct and jumps. ROUTER and
 * UNAVAILABLE are hidden functions called by name. The assembly is one
 * header per architecture (jump_entry_x86_64.h, jump_entry_aarch64.h). */
#ifndef EXECINFO_EX_JUMP_ENTRY_H
#define EXECINFO_EX_JUMP_ENTRY_H

#include <stdint.h>

/* What the entry saved, in this order (the assembly's offsets). */
struct jump_entry_call {
    uintptr_t arguments[3];     /* restored from here: a router may change them */
    const void *return_address; /* the caller's */
};

#if defined(__x86_64__)
#include "jump_entry_x86_64.h"
#elif defined(__aarch64__)
#include "jump_entry_aarch64.h"
#else
#error "src/base: x86_64 and aarch64 only; add jump_entry_ARCH.h"
#endif

#endif
