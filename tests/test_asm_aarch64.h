/* test_asm_aarch64.h: test_asm.h's functions on aarch64 (x1 and x2 are
 * a SA_SIGINFO handler's siginfo and ucontext; x2 already holds GARBAGE). */
#define TEST_ASM_CALL_PLAIN_WITH_GARBAGE                            \
    __asm__(".text\n"                                               \
            ".p2align 2\n"                                          \
            ".type call_plain_with_garbage, %function\n"            \
            "call_plain_with_garbage:\n"                            \
            "  .cfi_startproc\n"                                    \
            "  mov x16, x0\n"                                       \
            "  mov w0, w1\n"                                        \
            "  mov x1, x2\n"                                        \
            "  br x16\n"                                            \
            "  .cfi_endproc\n"                                      \
            ".size call_plain_with_garbage, .-call_plain_with_garbage\n");

#define TEST_ASM_BREAKPOINT                                                   \
    __asm__(".text\n"                                                         \
            ".p2align 2\n"                                                    \
            ".globl breakpoint_at_the_end\n"                                  \
            ".type breakpoint_at_the_end, %function\n"                        \
            "breakpoint_at_the_end:\n"                                        \
            "  .cfi_startproc\n"                                              \
            "  brk #0\n"                                                      \
            "  .cfi_endproc\n"                                                \
            ".size breakpoint_at_the_end, .-breakpoint_at_the_end\n"          \
            ".globl function_after_the_breakpoint\n"                          \
            ".type function_after_the_breakpoint, %function\n"                \
            "function_after_the_breakpoint:\n"                                \
            "  ret\n"                                                         \
            ".size function_after_the_breakpoint, .-function_after_the_breakpoint\n");

/* rbx_frame on aarch64: the CFA kept in x19, the walk's callee-saved
 * register (unwind_arch_aarch64.h's CFI_CALLEE_SAVED). */
#define TEST_ASM_RBX_FRAME                                  \
    __asm__(".text\n"                                       \
            ".p2align 2\n"                                  \
            ".type rbx_frame, %function\n"                  \
            "rbx_frame:\n"                                  \
            ".cfi_startproc\n"                              \
            "    stp x19, x30, [sp, #-16]!\n"               \
            ".cfi_adjust_cfa_offset 16\n"                   \
            ".cfi_offset x19, -16\n"                        \
            ".cfi_offset x30, -8\n"                         \
            "    mov x19, sp\n"                             \
            ".cfi_def_cfa_register x19\n"                   \
            "    mov x9, sp\n"                              \
            "    and x9, x9, #-64\n"                        \
            "    mov sp, x9\n"                              \
            "    blr x0\n"                                  \
            "    mov sp, x19\n"                             \
            ".cfi_def_cfa_register sp\n"                    \
            "    ldp x19, x30, [sp], #16\n"                 \
            ".cfi_adjust_cfa_offset -16\n"                  \
            ".cfi_restore x19\n"                            \
            ".cfi_restore x30\n"                            \
            "    ret\n"                                     \
            ".cfi_endproc\n"                                \
            ".size rbx_frame, .-rbx_frame\n");

#define TEST_ASM_CLOBBER_RBX() __asm__ volatile("mov x19, #0" ::: "x19", "memory")

#include <string.h>
#include <ucontext.h>
static inline void test_fill_context(ucontext_t *context, uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
    memset(context, 0, sizeof *context);
    context->uc_mcontext.pc = pc;
    context->uc_mcontext.sp = sp;
    context->uc_mcontext.regs[29] = fp;
}

/* libunwind's aarch64 unw_backtrace (its fast trace, Gtrace.c) gives a
 * call's return address minus 1 (use_prev_instr), and an interrupted pc
 * as it is; the walks agree when ours is theirs or theirs + 1. */
static inline int test_same_as_libunwind(const void *ours, const void *theirs)
{
    return ours == theirs || (const char *)ours == (const char *)theirs + 1;
}

/* What the CPU's traps say: __builtin_trap is brk #0x3e8 and a breakpoint
 * brk #0, both SIGTRAP with TRAP_BRKPT. */
#define TEST_TRAP_SIGNAL SIGTRAP
#define TEST_TRAP_HEADLINE "(SIGTRAP), code 1 (TRAP_BRKPT)"
#define TEST_BREAKPOINT_HEADLINE "(SIGTRAP), code 1 (TRAP_BRKPT)"

/* The multiarch directory of this architecture's libraries. */
#define TEST_MULTIARCH "aarch64-linux-gnu"

/* unw_backtrace's frame count without its repeats at the bottom of a
 * makecontext stack: aarch64 libunwind steps from __start_context to
 * itself, one byte lower each time (0x...c00, then bff, bfe), where our
 * walk ends. */
static inline int test_libunwind_count(void *const *theirs, int count)
{
    while (count >= 2 && (const char *)theirs[count - 1] == (const char *)theirs[count - 2] - 1)
        count--;
    return count;
}
