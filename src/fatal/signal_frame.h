/* signal_frame.h: the siginfo and ucontext a call of the handler really
 * has, which a plain call (through the pointer signal() returned) does not
 * pass: its second and third arguments are whatever the registers held. */
#ifndef EXECINFO_EX_SIGNAL_FRAME_H
#define EXECINFO_EX_SIGNAL_FRAME_H

#include <signal.h>
#include <stdint.h>

struct signal_frame {
    siginfo_t *info;      /* NULL: none to be had */
    void *ucontext;       /* the interrupted context (never NULL) */
    int plain_call;       /* the arguments were not a signal frame's */
    int found_by_walk;    /* ucontext: the kernel's frame, found on the stack */
};

/* Check SIGNO's INFO and UCONTEXT as the handler got them. They are used
 * when UCONTEXT is laid out as the kernel lays out its signal frame (on
 * this stack, above HANDLER_FRAME, readable, uc_mcontext.fpregs just after
 * it); INFO when it sits right after it in that frame, or is readable and
 * names SIGNO. Otherwise the call was a plain one: the kernel's frame is
 * looked for by walking this stack up to its first signal frame, and
 * failing that the context is this call's own (its caller). INFO is kept
 * only if INFO_FILLED (the kernel filled siginfo for the running action).
 * HANDLER_FRAME is the handler's __builtin_frame_address(0). Signal-safe;
 * reads only through process_vm_readv and the walker (where a seccomp
 * filter refuses process_vm_readv, a UCONTEXT right above HANDLER_FRAME,
 * where the kernel puts it, and the frame the walk finds are taken). */
void signal_frame_resolve(struct signal_frame *frame, int signo, siginfo_t *info,
                          void *ucontext, uintptr_t handler_frame, int info_filled);

#endif
