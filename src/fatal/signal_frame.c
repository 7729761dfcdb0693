/* signal_frame.c: tell a signal frame's arguments from a plain call's.
 * World: signal-safe (process_vm_readv, getpid, the stack walker).
 *
 * The usual way to chain to a handler that signal() replaced is to call
 * the pointer it returned, with the signal number only. Ours takes three
 * arguments, so the other two are then whatever rsi and rdx held: reading
 * them as a ucontext faulted inside the handler. So nothing given is read
 * directly: a candidate is copied with process_vm_readv (which fails on
 * unmapped memory instead of faulting) and must look like the frame the
 * kernel builds (arch/x86/kernel/signal.c: the return address, then the
 * kernel's ucontext, 304 bytes, then the siginfo, then the FPU state, to
 * which uc_mcontext.fpregs points). */
#define _GNU_SOURCE
#include "signal_frame.h"
#include "../unwind/stack_walk.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define KERNEL_UCONTEXT_SIZE 304          /* uc_flags .. an 8-byte uc_sigmask */
#define NEAR_HANDLER (1024 * 1024)        /* how far up this stack a frame may be */
#define FPREGS_WINDOW 1024                /* fpregs lies this close after the mcontext */
#define WALK_STEPS 64                     /* frames between here and the signal frame */

#define READABLE 1
#define UNREADABLE 0
#define CANNOT_TELL (-1)  /* process_vm_readv refused (a seccomp filter) */

static int copy_if_readable(void *copy, const void *address, size_t length)
{
    struct iovec local = { copy, length };
    struct iovec remote = { (void *)address, length };
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got == (ssize_t)length)
        return READABLE;
    return got >= 0 || errno == EFAULT ? UNREADABLE : CANNOT_TELL;
}

/* Laid out as the kernel's signal frame: readable, 16-byte aligned (the
 * kernel aligns it so), fpregs just after the mcontext (the kernel's FPU
 * state follows the siginfo; getcontext's is inside the ucontext_t).
 * Where nothing can be read to tell, only WHERE_KERNEL_PUTS_IT passes. */
static int looks_like_kernel_ucontext(const void *ucontext, int where_kernel_puts_it)
{
    uintptr_t at = (uintptr_t)ucontext;
    unsigned char copy[KERNEL_UCONTEXT_SIZE];
    if (ucontext == NULL || at % 16 != 0)
        return 0;
    int readable = copy_if_readable(copy, ucontext, sizeof copy);
    if (readable != READABLE)
        return readable == CANNOT_TELL && where_kernel_puts_it;
    uintptr_t fpregs;
    memcpy(&fpregs, copy + offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, fpregs),
           sizeof fpregs);
    return fpregs >= at + offsetof(ucontext_t, uc_sigmask) && fpregs < at + FPREGS_WINDOW;
}

static int info_names(const siginfo_t *info, int signo)
{
    siginfo_t copy;
    return info != NULL && copy_if_readable(&copy, info, sizeof copy) == READABLE &&
           copy.si_signo == signo;
}

/* DWARF register r of the walk is gregs[greg_of_dwarf[r]]. */
static const int greg_of_dwarf[CFI_REGISTER_COUNT] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

static void context_of_walk(ucontext_t *context, const struct stack_walk *walk)
{
    memset(context, 0, sizeof *context);
    for (int r = 0; r < CFI_REGISTER_COUNT; r++)
        if (walk->known & CFI_BIT(r))
            context->uc_mcontext.gregs[greg_of_dwarf[r]] = (greg_t)walk->registers[r];
}

/* Walk up from here to the first signal frame: the stack pointer of the
 * trampoline's frame is the kernel's ucontext. Meanwhile OWN gets the
 * context of the call to the handler (three frames up: this function,
 * signal_frame_resolve, the handler), for when there is no signal frame. */
__attribute__((noinline))
static void *find_kernel_ucontext(ucontext_t *own)
{
    struct stack_walk walk;
    uintptr_t pc, sp, fp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(fp));
    stack_walk_begin(&walk, pc, sp, fp);
    context_of_walk(own, &walk);
    for (int step = 1; step <= WALK_STEPS; step++) {
        uintptr_t trampoline_sp = walk.registers[CFI_SP];
        if (stack_walk_step(&walk) <= 0)
            return NULL;
        if (step <= 3)
            context_of_walk(own, &walk);
        if (walk.pc_is_exact) /* stepped out of a signal frame */
            return (void *)trampoline_sp;
    }
    return NULL;
}

void signal_frame_resolve(struct signal_frame *frame, int signo, siginfo_t *info,
                          void *ucontext, uintptr_t handler_frame, int info_filled)
{
    /* Static: an alternate stack is small. Only a plain call made outside
     * any signal handler uses it. */
    static ucontext_t own;
    uintptr_t at = (uintptr_t)ucontext;
    memset(frame, 0, sizeof *frame);
    /* Called by the kernel itself: the ucontext follows the return address
     * (the trampoline's) right above the handler's saved frame pointer. */
    int right_above = at == handler_frame + 2 * sizeof(uintptr_t);
    if (at > handler_frame && at - handler_frame < NEAR_HANDLER &&
        looks_like_kernel_ucontext(ucontext, right_above)) {
        frame->ucontext = ucontext;
        if (info_filled && ((uintptr_t)info == at + KERNEL_UCONTEXT_SIZE || info_names(info, signo)))
            frame->info = info;
        return;
    }
    frame->plain_call = 1;
    void *found = find_kernel_ucontext(&own);
    if (found != NULL && looks_like_kernel_ucontext(found, 1)) {
        frame->ucontext = found;
        frame->found_by_walk = 1;
        siginfo_t *found_info = (siginfo_t *)((char *)found + KERNEL_UCONTEXT_SIZE);
        if (info_filled && info_names(found_info, signo))
            frame->info = found_info;
        return;
    }
    frame->ucontext = &own;
}
