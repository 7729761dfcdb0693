/* crash_registers_aarch64.c: the report's registers on aarch64
 * (crash_facts.h, crash_registers.h): x0..x30, sp, pc, pstate.
 * World: signal-safe (pure). */
#define _GNU_SOURCE
#include "crash_facts.h"

#include <string.h>

const char *const crash_register_names[CRASH_REGISTERS] = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",  "pstate",
};

void crash_registers_of(uintptr_t registers[CRASH_REGISTERS], const ucontext_t *context)
{
    for (int i = 0; i < 31; i++)
        registers[i] = (uintptr_t)context->uc_mcontext.regs[i];
    registers[31] = (uintptr_t)context->uc_mcontext.sp;
    registers[32] = (uintptr_t)context->uc_mcontext.pc;
    registers[33] = (uintptr_t)context->uc_mcontext.pstate;
}

/* The FP/SIMD record lives in uc_mcontext.__reserved, inside the
 * ucontext_t: the copy carries it. An SVE record larger than __reserved
 * would not fit; the kernel then points to it with an extra_context
 * record, which is not followed. */
int crash_copy_context(ucontext_t *copy, const ucontext_t *ucontext)
{
    memcpy(copy, ucontext, sizeof *copy);
    uint32_t magic;
    memcpy(&magic, ucontext->uc_mcontext.__reserved, sizeof magic);
    return magic == FPSIMD_MAGIC;
}

void crash_registers_back_to_breakpoint(ucontext_t *context)
{
    (void)context; /* brk reports its own address */
}
