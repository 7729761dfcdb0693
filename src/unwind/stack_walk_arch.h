/* stack_walk_arch.h: what the walker asks of the architecture, one file
 * per architecture beside stack_walk.c (stack_walk_x86_64.c,
 * stack_walk_aarch64.c), picked by the Makefile's ARCH.
 * World: signal-safe. */
#ifndef EXECINFO_EX_STACK_WALK_ARCH_H
#define EXECINFO_EX_STACK_WALK_ARCH_H

#include <stdint.h>
#include <ucontext.h>

#include "stack_walk.h"

#define ALL_KNOWN (CFI_BIT(CFI_REGISTER_COUNT) - 1)

/* Every register of a signal handler's ucontext into the walk. */
void stack_walk_arch_load_ucontext(struct stack_walk *walk, const ucontext_t *context);

/* A step at a pc that no CFI covers: at an exact pc, a call through a
 * bad pointer (the return address is where the call left it); on aarch64
 * under qemu-user, the signal trampoline, which has no CFI there. 1 if
 * it stepped. */
int stack_walk_arch_step_without_cfi(struct stack_walk *walk);

#endif
