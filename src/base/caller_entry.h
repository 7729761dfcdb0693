/* caller_entry.h: an exported function whose body, in C, is handed what
 * its entry saw of the caller (struct backtrace_caller), so that a stack
 * captured inside it can start at the caller (backtrace_from_caller)
 * instead of stepping out of every frame of ours first.
 *
 * Before the body runs, the entry makes room for a struct backtrace_caller
 * on its own stack and fills it: the return address (the word at rsp),
 * the caller's rsp after the return (rsp + 8), and rbp and rbx, which no
 * instruction has changed yet. It then calls BODY with the struct's
 * address in CALLER_REGISTER (the argument register after the function's
 * own: rsi for one argument, rdx for two, rcx for three) and returns what
 * BODY returns. BODY must be a hidden global function (the assembly calls
 * it by name, without the PLT). rax is clobbered, which no non-variadic
 * function takes. The stack is 16-byte aligned at the call, and the CFI
 * says where the return address is throughout, so a walk from inside BODY
 * steps through the entry as through any frame. x86_64 only, as
 * src/unwind is. */
#ifndef EXECINFO_EX_CALLER_ENTRY_H
#define EXECINFO_EX_CALLER_ENTRY_H

#define CALLER_ENTRY(name, body, caller_register) \
    CALLER_ENTRY_IN(".text", name, body, caller_register)

/* The same in SECTION (a test keeps it among the frames it skips). */
#define CALLER_ENTRY_IN(section, name, body, caller_register) \
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
            "    movq %rsp, %" #caller_register "\n" \
            "    call " #body "\n"                \
            "    addq $40, %rsp\n"                \
            ".cfi_adjust_cfa_offset -40\n"        \
            "    ret\n"                           \
            ".cfi_endproc\n"                      \
            ".size " #name ", .-" #name "\n"     \
            ".popsection\n")

#endif
