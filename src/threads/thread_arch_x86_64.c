/* thread_arch_x86_64.c: an x86-64 thread's interrupted context
 * (thread_arch.h).
 * World: signal-safe (pure: reads two code bytes the caller vouches for).
 *
 * A signal that meets a thread asleep in a system call ends the sleep
 * with -ERESTARTSYS (or a sibling); on the way to the handler the kernel
 * either restarts the call (SA_RESTART, or a call that always restarts:
 * rip moved back over the 2-byte `syscall`, rax the call's number again,
 * or __NR_restart_syscall), or ends it with -EINTR in rax and rip just
 * past `syscall` (arch/x86/kernel/signal.c, handle_signal). */
#define _GNU_SOURCE
#include "thread_arch.h"

#include <errno.h>

#define SYSCALL_LENGTH 2
#define PAGE_LOW_BITS 4095u

static int is_syscall_at(uintptr_t address, int (*readable)(uintptr_t, size_t))
{
    if (!readable(address, SYSCALL_LENGTH))
        return 0;
    const unsigned char *code = (const unsigned char *)address;
    return code[0] == 0x0f && code[1] == 0x05;
}

uintptr_t thread_arch_stack_pointer(const ucontext_t *context)
{
    return (uintptr_t)context->uc_mcontext.gregs[REG_RSP];
}

int thread_arch_in_syscall(const ucontext_t *context,
                           int (*readable)(uintptr_t address, size_t length))
{
    uintptr_t pc = (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
    long result = (long)context->uc_mcontext.gregs[REG_RAX];
    if (is_syscall_at(pc, readable))
        return 1; /* to be restarted */
    return result == -EINTR && (pc & PAGE_LOW_BITS) >= SYSCALL_LENGTH &&
           is_syscall_at(pc - SYSCALL_LENGTH, readable);
}

uintptr_t thread_arch_thread_pointer(void)
{
    uintptr_t pointer;
    __asm__("mov %%fs:0, %0" : "=r"(pointer)); /* tcbhead_t.tcb: the TCB's own address */
    return pointer;
}
