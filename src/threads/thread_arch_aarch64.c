/* thread_arch_aarch64.c: an aarch64 thread's interrupted context
 * (thread_arch.h).
 * World: signal-safe (pure: reads one code word the caller vouches for).
 *
 * As on x86-64, a signal that meets a thread asleep in a system call
 * either restarts it (pc moved back over the 4-byte `svc #0`, x0 the
 * first argument again, or x8 __NR_restart_syscall) or ends it with
 * -EINTR in x0 and pc just past `svc` (arch/arm64/kernel/signal.c,
 * do_signal). */
#define _GNU_SOURCE
#include "thread_arch.h"

#include <errno.h>
#include <string.h>

#define SVC_LENGTH 4
#define SVC_ZERO 0xd4000001u /* svc #0 */
#define PAGE_LOW_BITS 4095u

static int is_svc_at(uintptr_t address, int (*readable)(uintptr_t, size_t))
{
    if (!readable(address, SVC_LENGTH))
        return 0;
    uint32_t word;
    memcpy(&word, (const void *)address, sizeof word);
    return word == SVC_ZERO;
}

uintptr_t thread_arch_stack_pointer(const ucontext_t *context)
{
    return (uintptr_t)context->uc_mcontext.sp;
}

int thread_arch_in_syscall(const ucontext_t *context,
                           int (*readable)(uintptr_t address, size_t length))
{
    uintptr_t pc = (uintptr_t)context->uc_mcontext.pc;
    long result = (long)context->uc_mcontext.regs[0];
    if (is_svc_at(pc, readable))
        return 1; /* to be restarted */
    return result == -EINTR && (pc & PAGE_LOW_BITS) >= SVC_LENGTH &&
           is_svc_at(pc - SVC_LENGTH, readable);
}

uintptr_t thread_arch_thread_pointer(void)
{
    uintptr_t pointer;
    __asm__("mrs %0, tpidr_el0" : "=r"(pointer));
    return pointer;
}
