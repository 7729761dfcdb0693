/* unwind_arch_x86_64.h: x86-64's DWARF registers (System V psABI 3.6.2):
 * rax rdx rcx rbx rsi rdi rbp rsp r8..r15, and 16, the return-address
 * column, which is also where the walk keeps the pc. */
#ifndef EXECINFO_EX_UNWIND_ARCH_X86_64_H
#define EXECINFO_EX_UNWIND_ARCH_X86_64_H

#define CFI_REGISTER_COUNT 17
#define CFI_CALLEE_SAVED 3   /* rbx: what a function's entry hands the walk besides rbp */
#define CFI_FP 6             /* rbp */
#define CFI_SP 7             /* rsp */
#define CFI_RETURN_ADDRESS 16
#define CFI_PC 16

#include <stdint.h>

/* A return address as code is found at (aarch64 strips pointer
 * authentication): here, itself. */
static inline uintptr_t unwind_arch_strip(uintptr_t address)
{
    return address;
}

/* The pc, stack pointer and frame pointer at this instruction, into three
 * uintptr_t lvalues (a walk from here starts with them). */
#define UNWIND_ARCH_HERE(pc, sp, fp) \
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" \
                     : "=r"(pc), "=r"(sp), "=r"(fp))

#endif
