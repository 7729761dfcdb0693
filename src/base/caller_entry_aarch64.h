/* caller_entry_aarch64.h: CALLER_ENTRY_IN's assembly on aarch64
 * (caller_entry.h). The struct: the return address (x30 at entry: a bl
 * leaves it unsigned), the caller's sp (unchanged by a call), x29 (the
 * struct's rbp field) and x19 (its rbx field: the walk's CFI_CALLEE_SAVED).
 * The struct's address goes in the argument register after the
 * function's own (x1, x2, x3). x16 (IP0) is clobbered. x29 and x30 are
 * saved above the struct, as a frame record, for the call. */
#ifndef EXECINFO_EX_CALLER_ENTRY_AARCH64_H
#define EXECINFO_EX_CALLER_ENTRY_AARCH64_H

#define CALLER_ENTRY_REGISTER_1 "x1"
#define CALLER_ENTRY_REGISTER_2 "x2"
#define CALLER_ENTRY_REGISTER_3 "x3"

/* The same in SECTION (a test keeps it among the frames it skips). */
#define CALLER_ENTRY_IN(section, name, body, arguments) \
    __asm__(".pushsection " section "\n"          \
            ".globl " #name "\n"                  \
            ".type " #name ", %function\n"        \
            ".p2align 4\n"                        \
            #name ":\n"                           \
            ".cfi_startproc\n"                    \
            "    sub sp, sp, #48\n"               \
            ".cfi_def_cfa_offset 48\n"            \
            "    stp x29, x30, [sp, #32]\n"       \
            ".cfi_offset x29, -16\n"              \
            ".cfi_offset x30, -8\n"               \
            "    add x16, sp, #48\n"              \
            "    stp x30, x16, [sp]\n"            \
            "    stp x29, x19, [sp, #16]\n"       \
            "    mov " CALLER_ENTRY_REGISTER_##arguments ", sp\n" \
            "    bl " #body "\n"                  \
            "    ldp x29, x30, [sp, #32]\n"       \
            "    add sp, sp, #48\n"               \
            ".cfi_restore x29\n"                  \
            ".cfi_restore x30\n"                  \
            ".cfi_def_cfa_offset 0\n"             \
            "    ret\n"                           \
            ".cfi_endproc\n"                      \
            ".size " #name ", .-" #name "\n"     \
            ".popsection\n")

#endif
