/* caller_entry_x86_64.h: CALLER_ENTRY_IN's assembly on x86-64
 * (caller_entry.h). The struct: the return address (the word at rsp),
 * the caller's rsp after the return (rsp + 8), rbp and rbx. The struct's
 * address goes in the argument register after the function's own (rsi
 * for one argument, rdx for two, rcx for three). rax is clobbered, which
 * no non-variadic function takes. The stack is 16-byte aligned at the
 * call. */
#ifndef EXECINFO_EX_CALLER_ENTRY_X86_64_H
#define EXECINFO_EX_CALLER_ENTRY_X86_64_H

#define CALLER_ENTRY_REGISTER_1 "rsi"
#define CALLER_ENTRY_REGISTER_2 "rdx"
#define CALLER_ENTRY_REGISTER_3 "rcx"

/* The same in SECTION (a test keeps it among the frames it skips). */
#define CALLER_ENTRY_IN(section, name, body, arguments) \
    __asm__(".pushsection " section "\n"          \
            ".globl " #name "\n"                  \
            ".type " #name ", @function\n"        \
            ".p2align 4\n"                        \
            #name ":\n"                           \
            ".cfi_startproc\n"                    \
            "    subq $40, %rsp\n"                \
            ".cfi_adjust_cfa_offset 40\n"         \
            "    movq 40(%rsp), %rax\n"           \
            "    movq %rax, 0(%rsp)\n"            \
            "    leaq 48(%rsp), %rax\n"           \
            "    movq %rax, 8(%rsp)\n"            \
            "    movq %rbp, 16(%rsp)\n"           \
            "    movq %rbx, 24(%rsp)\n"           \
            "    movq %rsp, %" CALLER_ENTRY_REGISTER_##arguments "\n" \
            "    call " #body "\n"                \
            "    addq $40, %rsp\n"                \
            ".cfi_adjust_cfa_offset -40\n"        \
            "    ret\n"                           \
            ".cfi_endproc\n"                      \
            ".size " #name ", .-" #name "\n"     \
            ".popsection\n")

#endif
