/* elf_library_entry_x86_64.h: elf_libraries.c's jump table on x86-64
 * (elf_library_entry.h). The slot number travels in eax. */
#ifndef EXECINFO_EX_ELF_LIBRARY_ENTRY_X86_64_H
#define EXECINFO_EX_ELF_LIBRARY_ENTRY_X86_64_H

#define ELF_LIBRARY_ENTRY(index, name)                                \
    __asm__(".text\n"                                                 \
            ".globl " #name "\n"                                      \
            ".hidden " #name "\n"                                     \
            ".type " #name ", @function\n"                            \
            #name ":\n"                                               \
            "    jmp *elf_library_slots+8*" #index "(%rip)\n"         \
            ".size " #name ", .-" #name "\n"                          \
            "elf_library_resolve_" #index ":\n"                       \
            "    movl $" #index ", %eax\n"                            \
            "    jmp elf_library_resolve\n");

/* Saves the six argument registers and the slot number (7 pushes: the
 * stack is then 16-byte aligned for the call), loads, restores, jumps. */
#define ELF_LIBRARY_RESOLVER                   \
    __asm__(".text\n"                          \
            "elf_library_resolve:\n"           \
            "    pushq %rdi\n"                 \
            "    pushq %rsi\n"                 \
            "    pushq %rdx\n"                 \
            "    pushq %rcx\n"                 \
            "    pushq %r8\n"                  \
            "    pushq %r9\n"                  \
            "    pushq %rax\n"                 \
            "    call elf_libraries_load\n"    \
            "    popq %rax\n"                  \
            "    popq %r9\n"                   \
            "    popq %r8\n"                   \
            "    popq %rcx\n"                  \
            "    popq %rdx\n"                  \
            "    popq %rsi\n"                  \
            "    popq %rdi\n"                  \
            "    leaq elf_library_slots(%rip), %r11\n" \
            "    jmp *(%r11,%rax,8)\n"         \
            "elf_library_unavailable:\n"       \
            "    xorl %eax, %eax\n"            \
            "    ret\n");

#endif
