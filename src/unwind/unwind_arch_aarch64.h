/* unwind_arch_aarch64.h: AArch64's DWARF registers (DWARF for the Arm
 * 64-bit Architecture, 4.1): x0..x30 are 0..30, sp is 31. The return
 * address column is x30 (the link register), which a leaf function never
 * saves: the caller's pc is x30's value, while x30 itself stays a
 * register of its own. So the walk keeps the pc in a slot of its own, 32
 * (DWARF's number for the pc, which GCC's CFI never names). */
#ifndef EXECINFO_EX_UNWIND_ARCH_AARCH64_H
#define EXECINFO_EX_UNWIND_ARCH_AARCH64_H

#define CFI_REGISTER_COUNT 33
#define CFI_CALLEE_SAVED 19  /* x19: what a function's entry hands the walk besides x29 */
#define CFI_FP 29
#define CFI_RETURN_ADDRESS 30 /* x30, the link register */
#define CFI_SP 31
#define CFI_PC 32

#include <stdint.h>

/* A return address as code is found at: -mbranch-protection=pac-ret signs
 * x30 before a function saves it (DW_CFA_AARCH64_negate_ra_state marks
 * where), and the signature sits in the top bits. xpaclri strips it,
 * whether it is signed or not; it lies in the hint space, so a CPU
 * without pointer authentication runs it as a NOP (and has nothing to
 * strip). Done on every return address the walk recovers, as cheap as a
 * test of the state would be. */
static inline uintptr_t unwind_arch_strip(uintptr_t address)
{
    register uintptr_t x30 __asm__("x30") = address;
    __asm__("hint #7" : "+r"(x30)); /* xpaclri */
    return x30;
}

/* The pc, stack pointer and frame pointer (x29) at this instruction. */
#define UNWIND_ARCH_HERE(pc, sp, fp) \
    __asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29" : "=r"(pc), "=r"(sp), "=r"(fp))

#endif
