/* signal_frame_aarch64.c: the aarch64 signal frame (signal_frame_arch.h).
 * World: signal-safe (pure, and the walker).
 *
 * arch/arm64/kernel/signal.c: struct rt_sigframe at the handler's sp on
 * entry: the siginfo (128 bytes), then the ucontext (glibc's ucontext_t
 * has its layout), whose mcontext's __reserved starts with the FP/SIMD
 * record (magic 0x46508001) on a real kernel and under qemu-user alike.
 * The handler gets x1 = the siginfo, x2 = the ucontext. */
#define _GNU_SOURCE
#include "signal_frame_arch.h"

#include <stddef.h>
#include <string.h>

#define SIGINFO_SIZE 128 /* FPSIMD_MAGIC: <asm/sigcontext.h>, which <signal.h> includes here */
#define RESERVED_AT (offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, __reserved))

_Static_assert(SIGNAL_FRAME_COPY_SIZE >= RESERVED_AT + 4, "SIGNAL_FRAME_COPY_SIZE");

int signal_frame_arch_plausible(const unsigned char *copy, uintptr_t at)
{
    (void)at;
    uint32_t magic;
    memcpy(&magic, copy + RESERVED_AT, sizeof magic);
    return magic == FPSIMD_MAGIC;
}

/* The handler's own frame lies below the signal frame, at a distance its
 * prologue decides: the siginfo right before the ucontext says more. */
int signal_frame_arch_where_kernel_puts_it(uintptr_t ucontext, uintptr_t handler_frame,
                                           const siginfo_t *info)
{
    return ucontext > handler_frame && (uintptr_t)info + SIGINFO_SIZE == ucontext;
}

uintptr_t signal_frame_arch_info_at(uintptr_t ucontext)
{
    return ucontext - SIGINFO_SIZE;
}

uintptr_t signal_frame_arch_ucontext_at(uintptr_t trampoline_sp)
{
    return trampoline_sp + SIGINFO_SIZE;
}

__attribute__((noinline))
int signal_frame_arch_walk_from_caller(struct stack_walk *walk)
{
    uintptr_t pc, sp, fp;
    __asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29" : "=r"(pc), "=r"(sp), "=r"(fp));
    stack_walk_begin(walk, pc, sp, fp);
    return stack_walk_step(walk) > 0;
}

void signal_frame_arch_context_of_walk(ucontext_t *context, const struct stack_walk *walk)
{
    memset(context, 0, sizeof *context);
    for (int r = 0; r < 31; r++)
        if (walk->known & CFI_BIT(r))
            context->uc_mcontext.regs[r] = walk->registers[r];
    if (walk->known & CFI_BIT(CFI_SP))
        context->uc_mcontext.sp = walk->registers[CFI_SP];
    if (walk->known & CFI_BIT(CFI_PC))
        context->uc_mcontext.pc = walk->registers[CFI_PC];
}
