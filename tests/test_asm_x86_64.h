/* test_asm_x86_64.h: test_asm.h's functions on x86-64. Included once per
 * test program that uses them. */
#define TEST_ASM_CALL_PLAIN_WITH_GARBAGE                            \
    __asm__(".text\n"                                               \
            ".type call_plain_with_garbage, @function\n"            \
            "call_plain_with_garbage:\n"                            \
            "  .cfi_startproc\n"                                    \
            "  mov %rdi, %rax\n"                                    \
            "  mov %esi, %edi\n"                                    \
            "  mov %rdx, %rsi\n"                                    \
            "  jmp *%rax\n"                                         \
            "  .cfi_endproc\n"                                      \
            ".size call_plain_with_garbage, .-call_plain_with_garbage\n");

#define TEST_ASM_BREAKPOINT                                                   \
    __asm__(".text\n"                                                         \
            ".globl breakpoint_at_the_end\n"                                  \
            ".type breakpoint_at_the_end, @function\n"                        \
            "breakpoint_at_the_end:\n"                                        \
            "  .cfi_startproc\n"                                              \
            "  int3\n"                                                        \
            "  .cfi_endproc\n"                                                \
            ".size breakpoint_at_the_end, .-breakpoint_at_the_end\n"          \
            ".globl function_after_the_breakpoint\n"                          \
            ".type function_after_the_breakpoint, @function\n"                \
            "function_after_the_breakpoint:\n"                                \
            "  ret\n"                                                         \
            ".size function_after_the_breakpoint, .-function_after_the_breakpoint\n");

#define TEST_ASM_RBX_FRAME \
    __asm__(".text\n"                                                     \
            ".type rbx_frame, @function\n"                                \
            "rbx_frame:\n"                                                \
            ".cfi_startproc\n"                                            \
            "    pushq %rbx\n"                                            \
            ".cfi_adjust_cfa_offset 8\n"                                  \
            ".cfi_offset rbx, -16\n"                                      \
            "    movq %rsp, %rbx\n"                                       \
            ".cfi_def_cfa_register rbx\n"                                 \
            "    andq $-64, %rsp\n"                                       \
            "    call *%rdi\n"                                            \
            "    movq %rbx, %rsp\n"                                       \
            ".cfi_def_cfa_register rsp\n"                                 \
            "    popq %rbx\n"                                             \
            ".cfi_adjust_cfa_offset -8\n"                                 \
            ".cfi_restore rbx\n"                                          \
            "    ret\n"                                                   \
            ".cfi_endproc\n"                                              \
            ".size rbx_frame, .-rbx_frame\n");

#define TEST_ASM_CLOBBER_RBX() __asm__ volatile("xor %%ebx, %%ebx" ::: "rbx", "memory")

#include <string.h>
#include <ucontext.h>
static inline void test_fill_context(ucontext_t *context, uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
    memset(context, 0, sizeof *context);
    context->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
    context->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    context->uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
}

/* libunwind's unw_backtrace gives return addresses as they are. */
static inline int test_same_as_libunwind(const void *ours, const void *theirs)
{
    return ours == theirs;
}

/* What the CPU's traps say: __builtin_trap is ud2, int3 a SI_KERNEL trap. */
#define TEST_TRAP_SIGNAL SIGILL
#define TEST_TRAP_HEADLINE "(SIGILL), code 2 (ILL_ILLOPN)"
#define TEST_BREAKPOINT_HEADLINE "(SIGTRAP), code 128 (SI_KERNEL)"

/* The multiarch directory of this architecture's libraries. */
#define TEST_MULTIARCH "x86_64-linux-gnu"

/* unw_backtrace's frame count as it is. */
static inline int test_libunwind_count(void *const *theirs, int count)
{
    (void)theirs;
    return count;
}
