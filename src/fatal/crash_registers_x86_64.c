/* crash_registers_x86_64.c: the report's registers on x86-64
 * (crash_facts.h, crash_registers.h).
 * World: signal-safe (pure). */
#define _GNU_SOURCE
#include "crash_facts.h"

#include <string.h>

const char *const crash_register_names[CRASH_REGISTERS] = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
};

static const int register_index[CRASH_REGISTERS] = {
    REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
    REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP, REG_EFL,
};

void crash_registers_of(uintptr_t registers[CRASH_REGISTERS], const ucontext_t *context)
{
    for (int i = 0; i < CRASH_REGISTERS; i++)
        registers[i] = (uintptr_t)context->uc_mcontext.gregs[register_index[i]];
}

int crash_copy_context(ucontext_t *copy, const ucontext_t *ucontext)
{
    memcpy(copy, ucontext, sizeof *copy);
    if (ucontext->uc_mcontext.fpregs == NULL)
        return 0;
    memcpy(&copy->__fpregs_mem, ucontext->uc_mcontext.fpregs, sizeof copy->__fpregs_mem);
    copy->uc_mcontext.fpregs = &copy->__fpregs_mem;
    return 1;
}

void crash_registers_back_to_breakpoint(ucontext_t *context)
{
    context->uc_mcontext.gregs[REG_RIP]--;
}
