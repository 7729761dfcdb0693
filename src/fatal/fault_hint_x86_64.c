/* fault_hint_x86_64.c: the fault hints' x86-64 half: the faulting
 * instruction's memory operand (decoded by instruction_x86_64.c: legacy,
 * VEX and EVEX encodings, ModRM, SIB and displacement; the string
 * instructions' rsi and rdi; moffs) computed with the interrupted
 * registers, and what a canonical address is. A fs:/gs: base, a
 * rip-relative operand, VSIB and an EVEX compressed displacement of an
 * unknown size are not decoded.
 * World: signal-safe (process_vm_readv, arithmetic). */
#define _GNU_SOURCE
#include "fault_hint.h"
#include "instruction_x86_64.h"

#include <sys/uio.h>
#include <unistd.h>

/* x86 register number (ModRM, SIB: rax rcx rdx rbx rsp rbp rsi rdi r8..)
 * to the index in crash_register_names (rax rbx rcx rdx rsi rdi rbp rsp r8..). */
static const int crash_index_of_x86[16] = { 0, 2, 3, 1, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

/* 48-bit virtual addresses: bits 63..47 all equal. */
int fault_hint_arch_canonical(uintptr_t value)
{
    return (uintptr_t)((int64_t)(value << 16) >> 16) == value;
}

static uintptr_t register_value(const struct crash_facts *facts, int x86)
{
    return facts->registers[crash_index_of_x86[x86]];
}

int fault_hint_arch_operand(const struct crash_facts *facts, struct crash_operand *operand)
{
    uint8_t code[X86_INSTRUCTION_MAX];
    uintptr_t pc = facts->registers[16];
    struct iovec local = { code, sizeof code };
    struct iovec remote = { (void *)pc, sizeof code };
    /* Short near the end of a mapping: decode what was there. */
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    struct x86_instruction decoded;
    if (got <= 0 || !x86_instruction_decode(code, (size_t)got, &decoded) ||
        !decoded.address_known)
        return 0;
    if (decoded.string_pair && fault_hint_arch_canonical(register_value(facts, X86_RSI)))
        decoded.base = X86_RDI;
    uintptr_t address = (uintptr_t)decoded.displacement;
    if (decoded.base >= 0)
        address += register_value(facts, decoded.base);
    if (decoded.index >= 0)
        address += register_value(facts, decoded.index) * (uintptr_t)decoded.scale;
    if (decoded.address32)
        address &= 0xffffffffu;
    operand->base = decoded.base >= 0 ? crash_index_of_x86[decoded.base] : -1;
    operand->index = decoded.index >= 0 ? crash_index_of_x86[decoded.index] : -1;
    operand->scale = decoded.scale;
    operand->displacement = decoded.displacement;
    operand->address = address;
    return 1;
}
