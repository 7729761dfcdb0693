/* minidump_context.h: what the minidump writer needs from the CPU: its
 * context record and its system-info fields. One implementation per
 * architecture (minidump_context_x86_64.c; aarch64 next), the generic
 * writer calls only these.
 * World: signal-safe. */
#ifndef EXECINFO_EX_MINIDUMP_CONTEXT_H
#define EXECINFO_EX_MINIDUMP_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "minidump_format.h"

/* The largest context record of the architectures (MDRawContextAMD64). */
#define MINIDUMP_CONTEXT_SIZE_MAX 1232

/* The size of this architecture's context record. */
size_t minidump_context_size(void);

/* The full context of UC into OUT (minidump_context_size() bytes), its
 * floating-point state too when HAVE_FLOAT_STATE (uc_mcontext.fpregs
 * points at it). */
void minidump_context_from_ucontext(void *out, const ucontext_t *uc, int have_float_state);

/* What is known of a thread that could not be read: its stack pointer
 * and pc (the kernel's /proc/self/task/TID/syscall), or nothing (0, 0). */
void minidump_context_from_stack_pointer(void *out, uintptr_t sp, uintptr_t pc);

uintptr_t minidump_ucontext_stack_pointer(const ucontext_t *uc);
uintptr_t minidump_ucontext_pc(const ucontext_t *uc);

/* The processor fields of the system-info stream: architecture, level,
 * revision, and the CPU's identification. */
void minidump_describe_cpu(struct md_raw_system_info *info);

#endif
