/* thread_arch.h: what the every-thread report reads from an answering
 * thread's interrupted context, one file per architecture beside the
 * generic code (thread_arch_x86_64.c).
 * World: signal-safe (pure). */
#ifndef EXECINFO_EX_THREAD_ARCH_H
#define EXECINFO_EX_THREAD_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

/* The stack pointer when the thread was stopped. */
uintptr_t thread_arch_stack_pointer(const ucontext_t *context);

/* Whether the thread was stopped asleep in a system call, which is what
 * /proc/self/task/TID/stat shows as 'S' (an interruptible sleep): the
 * kernel leaves the pc on the system-call instruction, to run it again,
 * or just after it with -EINTR as its result. A thread stopped anywhere
 * else was running ('R'). READABLE(ADDRESS, LENGTH) says whether code
 * bytes may be read (an execute-only page may not). */
int thread_arch_in_syscall(const ucontext_t *context,
                           int (*readable)(uintptr_t address, size_t length));

/* The calling thread's thread pointer, which its static TLS is laid out
 * around (x86-64: the fs base, which glibc also keeps at %fs:0). */
uintptr_t thread_arch_thread_pointer(void);

#endif
