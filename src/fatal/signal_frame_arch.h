/* signal_frame_arch.h: the kernel's signal frame on this architecture,
 * for signal_frame.c; one file per architecture beside it
 * (signal_frame_x86_64.c, signal_frame_aarch64.c), picked by ARCH.
 * World: signal-safe (pure, and the walker). */
#ifndef EXECINFO_EX_SIGNAL_FRAME_ARCH_H
#define EXECINFO_EX_SIGNAL_FRAME_ARCH_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "../unwind/stack_walk.h"

/* Bytes of a candidate ucontext copied to judge it: enough for both
 * architectures' checks. */
#define SIGNAL_FRAME_COPY_SIZE 512

/* Whether COPY (SIGNAL_FRAME_COPY_SIZE bytes read at AT) is laid out as
 * the kernel's ucontext. */
int signal_frame_arch_plausible(const unsigned char *copy, uintptr_t at);

/* Whether a handler whose frame address is HANDLER_FRAME was handed
 * UCONTEXT (and INFO) where the kernel puts them when it calls it. */
int signal_frame_arch_where_kernel_puts_it(uintptr_t ucontext, uintptr_t handler_frame,
                                           const siginfo_t *info);

/* Where the kernel put the siginfo of the frame whose ucontext is at
 * UCONTEXT. */
uintptr_t signal_frame_arch_info_at(uintptr_t ucontext);

/* The ucontext of the frame whose trampoline ran with TRAMPOLINE_SP. */
uintptr_t signal_frame_arch_ucontext_at(uintptr_t trampoline_sp);

/* Start WALK at the call of this function, in its caller (exact
 * registers taken here, one step). 1, or 0 if the step failed. */
int signal_frame_arch_walk_from_caller(struct stack_walk *walk);

/* The registers WALK knows, into CONTEXT (the others 0). */
void signal_frame_arch_context_of_walk(ucontext_t *context, const struct stack_walk *walk);

#endif
