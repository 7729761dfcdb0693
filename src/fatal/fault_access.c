/* fault_access.c: the generic half of the fault access: which signals
 * have one, and reading the faulting instruction's bytes; the
 * architecture's file reads the fault code and decodes the instruction.
 * World: signal-safe (memory_read: process_vm_readv; arithmetic). */
#define _GNU_SOURCE
#include "fault_access.h"
#include "../base/memory_read.h"

#include <string.h>

#define CODE_MAX 16 /* an x86-64 instruction is at most 15 bytes, aarch64's 4 */

const char *fault_access_direction_name(enum fault_access_direction direction)
{
    switch (direction) {
    case FAULT_ACCESS_READ: return "READ";
    case FAULT_ACCESS_WRITE: return "WRITE";
    case FAULT_ACCESS_EXECUTE: return "EXECUTE";
    default: return NULL;
    }
}

/* memory_read, not a load: a pc in a page that cannot be read fails
 * here instead of faulting again inside the handler. */
static unsigned size_at(uintptr_t pc)
{
    uint8_t code[CODE_MAX];
    ssize_t got = memory_read(code, pc, sizeof code);
    return got > 0 ? fault_access_arch_size(code, (size_t)got) : 0;
}

int fault_access_decode(const siginfo_t *info, const void *ucontext, struct fault_access *access)
{
    memset(access, 0, sizeof *access);
    /* si_code <= 0: sent by a process (kill, sigqueue, tgkill); no access. */
    if (info == NULL || ucontext == NULL || info->si_code <= 0 ||
        (info->si_signo != SIGSEGV && info->si_signo != SIGBUS))
        return 0;
    access->direction = fault_access_arch_direction(info, ucontext);
    if (access->direction != FAULT_ACCESS_EXECUTE)
        access->size = size_at(fault_access_arch_pc(ucontext));
    return access->direction != FAULT_ACCESS_UNKNOWN || access->size != 0;
}
