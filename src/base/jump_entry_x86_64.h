/* jump_entry_x86_64.h: JUMP_ENTRY's assembly on x86-64 (jump_entry.h).
 * The three pushes leave rdi, rsi, rdx and the return address as a
 * struct jump_entry_call at rsp, which is then 16-byte aligned. */
#ifndef EXECINFO_EX_JUMP_ENTRY_X86_64_H
#define EXECINFO_EX_JUMP_ENTRY_X86_64_H

#define JUMP_ENTRY(name, router, which, unavailable) \
    __asm__(".text\n"                                \
            ".globl " #name "\n"                     \
            ".type " #name ", @function\n"           \
            #name ":\n"                              \
            ".cfi_startproc\n"                       \
            "    pushq %rdx\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            "    pushq %rsi\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            "    pushq %rdi\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            "    movq %rsp, %rdi\n"                  \
            "    movl $" #which ", %esi\n"           \
            "    call " #router "\n"                 \
            "    popq %rdi\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    popq %rsi\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    popq %rdx\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    testq %rax, %rax\n"                 \
            "    jz " #unavailable "\n"              \
            "    jmp *%rax\n"                        \
            ".cfi_endproc\n"                         \
            ".size " #name ", .-" #name "\n")

#endif
