/* signal_frame.c: tell a signal frame's arguments from a plain call's.
 * World: signal-safe (process_vm_readv, getpid, the stack walker).
 *
 * The usual way to chain to a handler that signal() replaced is to call
 * the pointer it returned, with the signal number only. Ours takes three
 * arguments, so the other two are then whatever rsi and rdx held: reading
 * them as a ucontext faulted inside the handler. So nothing given is read
 * directly: a candidate is copied with process_vm_readv (which fails on
 * unmapped memory instead of faulting) and must look like the frame the
 * kernel builds (its layout, one file per architecture:
 * signal_frame_x86_64.c, signal_frame_aarch64.c). */
#define _GNU_SOURCE
#include "signal_frame.h"
#include "signal_frame_arch.h"
#include "../unwind/stack_walk.h"
#include "../base/memory_read.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define NEAR_HANDLER (1024 * 1024)        /* how far up this stack a frame may be */
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
    if (got < 0 && errno == ENOSYS) /* qemu-user: memory_read looks it up */
        return memory_read(copy, (uintptr_t)address, length) == (ssize_t)length ? READABLE
                                                                                : UNREADABLE;
    return got >= 0 || errno == EFAULT ? UNREADABLE : CANNOT_TELL;
}

/* Readable, 16-byte aligned (the kernel aligns it so), and laid out as
 * the kernel lays it out (signal_frame_arch_plausible). Where nothing can
 * be read to tell, only WHERE_KERNEL_PUTS_IT passes. */
static int looks_like_kernel_ucontext(const void *ucontext, int where_kernel_puts_it)
{
    uintptr_t at = (uintptr_t)ucontext;
    unsigned char copy[SIGNAL_FRAME_COPY_SIZE];
    if (ucontext == NULL || at % 16 != 0)
        return 0;
    int readable = copy_if_readable(copy, ucontext, sizeof copy);
    if (readable != READABLE)
        return readable == CANNOT_TELL && where_kernel_puts_it;
    return signal_frame_arch_plausible(copy, at);
}

static int info_names(const siginfo_t *info, int signo)
{
    siginfo_t copy;
    return info != NULL && copy_if_readable(&copy, info, sizeof copy) == READABLE &&
           copy.si_signo == signo;
}

/* Walk up from here to the first signal frame: the stack pointer of the
 * trampoline's frame is the kernel's ucontext. Meanwhile OWN gets the
 * context of the call to the handler (three frames up: this function,
 * signal_frame_resolve, the handler), for when there is no signal frame. */
__attribute__((noinline))
static void *find_kernel_ucontext(ucontext_t *own)
{
    struct stack_walk walk;
    if (!signal_frame_arch_walk_from_caller(&walk))
        return NULL;
    signal_frame_arch_context_of_walk(own, &walk);
    for (int step = 1; step <= WALK_STEPS; step++) {
        uintptr_t trampoline_sp = walk.registers[CFI_SP];
        if (stack_walk_step(&walk) <= 0)
            return NULL;
        if (step <= 3)
            signal_frame_arch_context_of_walk(own, &walk);
        if (walk.pc_is_exact) /* stepped out of a signal frame */
            return (void *)signal_frame_arch_ucontext_at(trampoline_sp);
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
    /* Called by the kernel itself: where the architecture's frame says. */
    int right_above = signal_frame_arch_where_kernel_puts_it(at, handler_frame, info);
    if (at > handler_frame && at - handler_frame < NEAR_HANDLER &&
        looks_like_kernel_ucontext(ucontext, right_above)) {
        frame->ucontext = ucontext;
        if (info_filled && ((uintptr_t)info == signal_frame_arch_info_at(at) || info_names(info, signo)))
            frame->info = info;
        return;
    }
    frame->plain_call = 1;
    void *found = find_kernel_ucontext(&own);
    if (found != NULL && looks_like_kernel_ucontext(found, 1)) {
        frame->ucontext = found;
        frame->found_by_walk = 1;
        siginfo_t *found_info = (siginfo_t *)signal_frame_arch_info_at((uintptr_t)found);
        if (info_filled && info_names(found_info, signo))
            frame->info = found_info;
        return;
    }
    frame->ucontext = &own;
}
