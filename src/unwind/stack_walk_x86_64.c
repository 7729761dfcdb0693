/* stack_walk_x86_64.c: the walker's x86-64 parts (stack_walk_arch.h).
 * World: signal-safe (no lock, no malloc; reads through stack_walk_read). */
#define _GNU_SOURCE
#include "stack_walk_arch.h"

#include <dlfcn.h>

/* DWARF register r is gregs[greg_of_dwarf[r]]. */
static const int greg_of_dwarf[CFI_REGISTER_COUNT] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

void stack_walk_arch_load_ucontext(struct stack_walk *walk, const ucontext_t *context)
{
    for (int r = 0; r < CFI_REGISTER_COUNT; r++)
        walk->registers[r] = (uintptr_t)context->uc_mcontext.gregs[greg_of_dwarf[r]];
    walk->known = ALL_KNOWN;
}

/* A call through a bad pointer faults at an address with no code: the
 * return address the call pushed is still on top of the stack. Tried for
 * an exact pc only (where a walk starts, or after a signal frame): a
 * return address with no code is a broken stack, not a bad call. glibc's
 * __restore_rt has CFI (augmentation 'S'), so the signal frame needs
 * nothing here. */
int stack_walk_arch_step_without_cfi(struct stack_walk *walk)
{
    struct dl_find_object object;
    uintptr_t sp = walk->registers[CFI_SP], pc;
    if (!walk->pc_is_exact || !(walk->known & CFI_BIT(CFI_SP)) ||
        _dl_find_object((void *)walk->registers[CFI_PC], &object) == 0 ||
        stack_walk_read(walk, sp, &pc) < 0 || pc == 0)
        return 0;
    walk->registers[CFI_PC] = pc;
    walk->registers[CFI_SP] = sp + sizeof(uintptr_t);
    walk->known &= CFI_BIT(CFI_PC) | CFI_BIT(CFI_SP) | CFI_BIT(CFI_FP);
    walk->pc_is_exact = 0;
    walk->last_step_simple = 0;
    return 1;
}
