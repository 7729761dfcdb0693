/* signal_frame_x86_64.c: the x86-64 signal frame (signal_frame_arch.h).
 * World: signal-safe (pure, and the walker).
 *
 * arch/x86/kernel/signal.c: the return address (the trampoline's), then
 * the kernel's ucontext, 304 bytes, then the siginfo, then the FPU state,
 * to which uc_mcontext.fpregs points. */
#define _GNU_SOURCE
#include "signal_frame_arch.h"

#include <stddef.h>
#include <string.h>

#define KERNEL_UCONTEXT_SIZE 304          /* uc_flags .. an 8-byte uc_sigmask */
#define FPREGS_WINDOW 1024                /* fpregs lies this close after the mcontext */

_Static_assert(SIGNAL_FRAME_COPY_SIZE >= KERNEL_UCONTEXT_SIZE, "SIGNAL_FRAME_COPY_SIZE");

/* fpregs just after the mcontext (the kernel's FPU state follows the
 * siginfo; getcontext's is inside the ucontext_t). */
int signal_frame_arch_plausible(const unsigned char *copy, uintptr_t at)
{
    uintptr_t fpregs;
    memcpy(&fpregs, copy + offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, fpregs),
           sizeof fpregs);
    return fpregs >= at + offsetof(ucontext_t, uc_sigmask) && fpregs < at + FPREGS_WINDOW;
}

/* The ucontext follows the return address (the trampoline's) right above
 * the handler's saved frame pointer. */
int signal_frame_arch_where_kernel_puts_it(uintptr_t ucontext, uintptr_t handler_frame,
                                           const siginfo_t *info)
{
    (void)info;
    return ucontext == handler_frame + 2 * sizeof(uintptr_t);
}

uintptr_t signal_frame_arch_info_at(uintptr_t ucontext)
{
    return ucontext + KERNEL_UCONTEXT_SIZE;
}

/* The trampoline's sp, past its return address, is the ucontext. */
uintptr_t signal_frame_arch_ucontext_at(uintptr_t trampoline_sp)
{
    return trampoline_sp;
}

__attribute__((noinline))
int signal_frame_arch_walk_from_caller(struct stack_walk *walk)
{
    uintptr_t pc, sp, fp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(fp));
    stack_walk_begin(walk, pc, sp, fp);
    return stack_walk_step(walk) > 0;
}

/* DWARF register r of the walk is gregs[greg_of_dwarf[r]]. */
static const int greg_of_dwarf[CFI_REGISTER_COUNT] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

void signal_frame_arch_context_of_walk(ucontext_t *context, const struct stack_walk *walk)
{
    memset(context, 0, sizeof *context);
    for (int r = 0; r < CFI_REGISTER_COUNT; r++)
        if (walk->known & CFI_BIT(r))
            context->uc_mcontext.gregs[greg_of_dwarf[r]] = (greg_t)walk->registers[r];
}
