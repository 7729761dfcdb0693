/* elf_library_entry_aarch64.h: elf_libraries.c's jump table on aarch64
 * (elf_library_entry.h). The slot number travels in x17 (IP1), the
 * target in x16 (IP0): the registers the procedure-call standard leaves
 * to veneers and PLT stubs. The resolver keeps x0..x8 (the arguments and
 * the indirect-result register) and x30: libelf and libdw take no
 * floating-point arguments. */
#ifndef EXECINFO_EX_ELF_LIBRARY_ENTRY_AARCH64_H
#define EXECINFO_EX_ELF_LIBRARY_ENTRY_AARCH64_H

#define ELF_LIBRARY_ENTRY(index, name)                                         \
    __asm__(".text\n"                                                          \
            ".globl " #name "\n"                                               \
            ".hidden " #name "\n"                                              \
            ".type " #name ", %function\n"                                     \
            ".p2align 2\n"                                                     \
            #name ":\n"                                                        \
            "    adrp x16, elf_library_slots+8*" #index "\n"                   \
            "    ldr x16, [x16, #:lo12:elf_library_slots+8*" #index "]\n"      \
            "    br x16\n"                                                     \
            ".size " #name ", .-" #name "\n"                                   \
            "elf_library_resolve_" #index ":\n"                                \
            "    mov x17, #" #index "\n"                                       \
            "    b elf_library_resolve\n");

#define ELF_LIBRARY_RESOLVER                                   \
    __asm__(".text\n"                                          \
            ".p2align 2\n"                                     \
            "elf_library_resolve:\n"                           \
            "    stp x29, x30, [sp, #-96]!\n"                  \
            "    mov x29, sp\n"                                \
            "    stp x0, x1, [sp, #16]\n"                      \
            "    stp x2, x3, [sp, #32]\n"                      \
            "    stp x4, x5, [sp, #48]\n"                      \
            "    stp x6, x7, [sp, #64]\n"                      \
            "    stp x8, x17, [sp, #80]\n"                     \
            "    bl elf_libraries_load\n"                      \
            "    ldp x0, x1, [sp, #16]\n"                      \
            "    ldp x2, x3, [sp, #32]\n"                      \
            "    ldp x4, x5, [sp, #48]\n"                      \
            "    ldp x6, x7, [sp, #64]\n"                      \
            "    ldp x8, x17, [sp, #80]\n"                     \
            "    ldp x29, x30, [sp], #96\n"                    \
            "    adrp x16, elf_library_slots\n"                \
            "    add x16, x16, #:lo12:elf_library_slots\n"     \
            "    ldr x16, [x16, x17, lsl #3]\n"                \
            "    br x16\n"                                     \
            "elf_library_unavailable:\n"                       \
            "    mov x0, #0\n"                                 \
            "    ret\n");

#endif
