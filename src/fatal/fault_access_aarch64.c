/* fault_access_aarch64.c: the fault access on aarch64.
 * World: signal-safe (memory_read of the code's word, arithmetic).
 *
 * A real kernel puts the fault's syndrome (ESR_EL1) in the signal frame,
 * as an esr_context record among those in uc_mcontext.__reserved: a data
 * abort (EC 0x24, 0x25) says a write by its WnR bit, an instruction abort
 * (EC 0x20, 0x21) is an EXECUTE. qemu-user 7.2 writes no such record.
 * There the instruction says it instead: A64 loads and stores are
 * distinct instructions, so only an atomic read-modify-write (ldadd, cas)
 * stays unknown, and a fault at the pc itself is the fetch. */
#define _GNU_SOURCE
#include "fault_access.h"
#include "instruction_aarch64.h"
#include "../base/memory_read.h"

#include <string.h>
#include <ucontext.h>

#define ESR_CLASS(esr) (((esr) >> 26) & 0x3f)
#define ESR_CLASS_INSTRUCTION_ABORT_LOWER 0x20
#define ESR_CLASS_INSTRUCTION_ABORT 0x21
#define ESR_CLASS_DATA_ABORT_LOWER 0x24
#define ESR_CLASS_DATA_ABORT 0x25
#define ESR_WRITE_NOT_READ (1u << 6)

/* The esr_context record, walking __reserved's {magic, size} headers. */
static int syndrome_of(const ucontext_t *context, uint64_t *esr)
{
    const unsigned char *records = (const unsigned char *)context->uc_mcontext.__reserved;
    size_t space = sizeof context->uc_mcontext.__reserved;
    for (size_t at = 0; at + 8 <= space;) {
        uint32_t head[2];
        memcpy(head, records + at, sizeof head);
        if (head[0] == 0 || head[1] < 8 || head[1] > space - at)
            return 0;
        if (head[0] == ESR_MAGIC && head[1] >= 16) {
            memcpy(esr, records + at + 8, sizeof *esr);
            return 1;
        }
        at += head[1];
    }
    return 0;
}

static enum fault_access_direction direction_of_syndrome(uint64_t esr)
{
    switch (ESR_CLASS(esr)) {
    case ESR_CLASS_INSTRUCTION_ABORT_LOWER:
    case ESR_CLASS_INSTRUCTION_ABORT:
        return FAULT_ACCESS_EXECUTE;
    case ESR_CLASS_DATA_ABORT_LOWER:
    case ESR_CLASS_DATA_ABORT:
        return esr & ESR_WRITE_NOT_READ ? FAULT_ACCESS_WRITE : FAULT_ACCESS_READ;
    default:
        return FAULT_ACCESS_UNKNOWN;
    }
}

static enum fault_access_direction direction_of_instruction(uintptr_t pc)
{
    uint32_t word;
    struct a64_instruction decoded;
    if (memory_read(&word, pc, sizeof word) != sizeof word ||
        !a64_instruction_decode(word, &decoded))
        return FAULT_ACCESS_UNKNOWN;
    if (decoded.access == A64_LOAD)
        return FAULT_ACCESS_READ;
    return decoded.access == A64_STORE ? FAULT_ACCESS_WRITE : FAULT_ACCESS_UNKNOWN;
}

enum fault_access_direction fault_access_arch_direction(const siginfo_t *info,
                                                        const void *ucontext)
{
    const ucontext_t *context = ucontext;
    uint64_t esr;
    if (syndrome_of(context, &esr))
        return direction_of_syndrome(esr);
    uintptr_t pc = (uintptr_t)context->uc_mcontext.pc;
    if ((uintptr_t)info->si_addr == pc)
        return FAULT_ACCESS_EXECUTE;
    return direction_of_instruction(pc);
}

uintptr_t fault_access_arch_pc(const void *ucontext)
{
    return (uintptr_t)((const ucontext_t *)ucontext)->uc_mcontext.pc;
}

unsigned fault_access_arch_size(const uint8_t *code, size_t length)
{
    uint32_t word;
    struct a64_instruction decoded;
    if (length < sizeof word)
        return 0;
    memcpy(&word, code, sizeof word);
    return a64_instruction_decode(word, &decoded) ? decoded.size : 0;
}
