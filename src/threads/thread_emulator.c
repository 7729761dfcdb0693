/* thread_emulator.c: qemu-user's own threads, told apart from the
 * program's.
 * World: signal-safe (open, read, close; thread_proc).
 *
 * qemu-user runs a thread of its own in the process (7.2: call_rcu, made
 * again in a fork's child): a task in /proc/self/task like the program's,
 * but one that runs no guest code. Asked with a signal it never answers,
 * and its stack is not the program's memory; a report that waited for it
 * waited its whole deadline at every crash, and counted it as the
 * program's. It is left out (docs/DECISIONS.md).
 *
 * qemu-user is recognised by the vDSO it does not map: no AT_SYSINFO_EHDR
 * in /proc/self/auxv, which qemu writes for the guest (every Linux kernel
 * maps a vDSO unless booted with vdso=0). Its threads, by the signal mask
 * qemu_thread_create gives them, which /proc shows as the kernel holds
 * it: every signal blocked but SIGILL, SIGFPE and SIGSEGV. A guest
 * thread's mask there is the guest's own, with SIGBUS and SIGSEGV always
 * open (qemu's fault handling), or every signal for a moment
 * (block_signals): never that one (checked on qemu 7.2). */
#define _GNU_SOURCE
#include "thread_emulator.h"
#include "thread_proc.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#define BIT(signo) (1ull << ((signo) - 1))

/* -1 not looked yet, 0 a kernel's vDSO, 1 none (qemu-user). */
static atomic_int emulated = -1;

/* Whether /proc/self/auxv lacks AT_SYSINFO_EHDR; 0 if it cannot be read. */
static int auxv_lacks_vdso(void)
{
    int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_auxv_t entry;
    int found = 0, complete = 0;
    while (read(fd, &entry, sizeof entry) == (ssize_t)sizeof entry) {
        if (entry.a_type == AT_SYSINFO_EHDR && entry.a_un.a_val != 0)
            found = 1;
        if (entry.a_type == AT_NULL) {
            complete = 1;
            break;
        }
    }
    close(fd);
    return complete && !found;
}

static int under_emulator(void)
{
    int known = atomic_load(&emulated);
    if (known < 0) {
        known = auxv_lacks_vdso();
        atomic_store(&emulated, known);
    }
    return known;
}

/* qemu_thread_create's mask: all blocked but SIGILL, SIGFPE, SIGSEGV (and
 * what cannot be blocked: SIGKILL, SIGSTOP, and the C library's own 32
 * and 33, which its pthread_sigmask never blocks). */
static int is_emulator_thread(pid_t tid)
{
    uint64_t blocked, pending;
    if (thread_proc_signal_masks(tid, &blocked, &pending) < 0)
        return 0;
    uint64_t never = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(32) | BIT(33);
    uint64_t open = BIT(SIGILL) | BIT(SIGFPE) | BIT(SIGSEGV);
    return (blocked & ~never) == ~(never | open);
}

int thread_emulator_leave_out(pid_t *tids, int count)
{
    if (!under_emulator())
        return count;
    int kept = 0;
    for (int i = 0; i < count; i++)
        if (!is_emulator_thread(tids[i]))
            tids[kept++] = tids[i];
    return kept;
}
