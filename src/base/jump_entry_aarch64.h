/* jump_entry_aarch64.h: JUMP_ENTRY's assembly on aarch64 (jump_entry.h).
 * x0, x1, x2 and x30 (the return address: a bl leaves it unsigned) are
 * stored as a struct jump_entry_call at sp; x30 is reloaded from it before
 * the jump, so the function jumped to returns to the caller. x16 (IP0) is
 * the veneer register a branch may clobber anyway. */
#ifndef EXECINFO_EX_JUMP_ENTRY_AARCH64_H
#define EXECINFO_EX_JUMP_ENTRY_AARCH64_H

#define JUMP_ENTRY(name, router, which, unavailable) \
    __asm__(".text\n"                                \
            ".globl " #name "\n"                     \
            ".type " #name ", %function\n"           \
            ".p2align 2\n"                           \
            #name ":\n"                              \
            ".cfi_startproc\n"                       \
            "    sub sp, sp, #32\n"                  \
            ".cfi_def_cfa_offset 32\n"               \
            "    stp x0, x1, [sp]\n"                 \
            "    stp x2, x30, [sp, #16]\n"           \
            ".cfi_offset x30, -8\n"                  \
            "    mov x0, sp\n"                       \
            "    mov w1, #" #which "\n"              \
            "    bl " #router "\n"                   \
            "    mov x16, x0\n"                      \
            "    ldp x0, x1, [sp]\n"                 \
            "    ldp x2, x30, [sp, #16]\n"           \
            "    add sp, sp, #32\n"                  \
            ".cfi_restore x30\n"                     \
            ".cfi_def_cfa_offset 0\n"                \
            "    cbz x16, " #unavailable "\n"        \
            "    br x16\n"                           \
            ".cfi_endproc\n"                         \
            ".size " #name ", .-" #name "\n")

#endif
