/* jump_entry.h: an exported function that decides where a call goes, then
 * jumps there with the caller's return address in place.
 *
 * glibc's dlopen and dlmopen look at their return address to find the
 * calling module (a bare name is searched along its RUNPATH, $ORIGIN is
 * its directory, the new module joins its namespace): a wrapper in C that
 * calls them makes itself the caller, unless the compiler happens to turn
 * the call into a jump. The entry saves the first three argument
 * registers, runs SETUP (assembly that loads the router's arguments: the
 * saved rdx is at 0(%rsp), rsi at 8, rdi at 16, the caller's return
 * address at 24; the stack is 16-byte aligned there), calls ROUTER, which
 * returns the function to go on to (NULL: UNAVAILABLE, which returns what
 * the call returns on failure), restores the registers and jumps.
 * x86_64 only, as src/unwind is. */
#ifndef EXECINFO_EX_JUMP_ENTRY_H
#define EXECINFO_EX_JUMP_ENTRY_H

#define JUMP_ENTRY(name, setup, router, unavailable) \
    __asm__(".text\n"                                \
            ".globl " #name "\n"                     \
            ".type " #name ", @function\n"           \
            #name ":\n"                              \
            ".cfi_startproc\n"                       \
            "    pushq %rdi\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            "    pushq %rsi\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            "    pushq %rdx\n"                       \
            ".cfi_adjust_cfa_offset 8\n"             \
            setup                                    \
            "    call " #router "\n"                 \
            "    popq %rdx\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    popq %rsi\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    popq %rdi\n"                        \
            ".cfi_adjust_cfa_offset -8\n"            \
            "    testq %rax, %rax\n"                 \
            "    jz " #unavailable "\n"              \
            "    jmp *%rax\n"                        \
            ".cfi_endproc\n"                         \
            ".size " #name ", .-" #name "\n")

#endif
