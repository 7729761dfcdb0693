/* fault_access_x86_64.c: the fault access on x86-64.
 * World: signal-safe (arithmetic on the ucontext and the code's bytes).
 *
 * A page fault (trap 14) pushes an error code that the kernel hands on in
 * the ucontext's REG_ERR: bit 1 set for a write, bit 4 for an instruction
 * fetch. A read-modify-write (add [mem], r) on a page that cannot be read
 * faults on its read first when the page is not present at all, and as a
 * write when the page is read-only: the code says which, and it is
 * followed. Other traps (13, a general-protection fault on a non-canonical
 * address) carry no direction. */
#define _GNU_SOURCE
#include "fault_access.h"
#include "instruction_x86_64.h"

#include <ucontext.h>

#define TRAP_PAGE_FAULT 14
#define PAGE_FAULT_WRITE 0x2
#define PAGE_FAULT_FETCH 0x10

enum fault_access_direction fault_access_arch_direction(const siginfo_t *info,
                                                        const void *ucontext)
{
    (void)info;
    const greg_t *registers = ((const ucontext_t *)ucontext)->uc_mcontext.gregs;
    if (registers[REG_TRAPNO] != TRAP_PAGE_FAULT)
        return FAULT_ACCESS_UNKNOWN;
    if (registers[REG_ERR] & PAGE_FAULT_FETCH)
        return FAULT_ACCESS_EXECUTE;
    return registers[REG_ERR] & PAGE_FAULT_WRITE ? FAULT_ACCESS_WRITE : FAULT_ACCESS_READ;
}

uintptr_t fault_access_arch_pc(const void *ucontext)
{
    return (uintptr_t)((const ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
}

unsigned fault_access_arch_size(const uint8_t *code, size_t length)
{
    struct x86_instruction instruction;
    return x86_instruction_decode(code, length, &instruction) ? instruction.size : 0;
}
