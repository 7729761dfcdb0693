/* fault_hint_aarch64.c: the fault hints' aarch64 half: the faulting A64
 * load or store's address (instruction_aarch64.c: base register plus
 * offset, pre- and post-index, register offset with its extend and shift)
 * with the interrupted registers, and what address a mapping can have.
 * World: signal-safe (memory_read, arithmetic).
 *
 * The hints run for a fault without an address (SI_KERNEL). An aarch64
 * data abort carries its address in FAR_EL1, which the kernel gives as
 * si_addr, so on aarch64 that is rare (docs/CRASH_REPORT.md). */
#define _GNU_SOURCE
#include "fault_hint.h"
#include "instruction_aarch64.h"
#include "../base/memory_read.h"

#include <string.h>

#define PC_INDEX 32     /* crash_register_names: x0..x30, sp, pc */
#define XZR 31          /* Rm 31 in a register offset is the zero register */

/* User addresses are below 2^52 at most (52-bit VA); the top byte is
 * ignored by loads and stores (TBI), so a tag there is no fault. */
int fault_hint_arch_canonical(uintptr_t value)
{
    return (value & 0x00f0000000000000u) == 0;
}

static uintptr_t index_value(const struct crash_facts *facts, const struct a64_instruction *decoded)
{
    uintptr_t value = decoded->index == XZR ? 0 : facts->registers[decoded->index];
    switch (decoded->index_extend) {
    case 2: value = (uint32_t)value; break;                      /* uxtw */
    case 6: value = (uintptr_t)(int64_t)(int32_t)value; break;   /* sxtw */
    default: break;                                              /* lsl, sxtx */
    }
    return value << decoded->shift;
}

int fault_hint_arch_operand(const struct crash_facts *facts, struct crash_operand *operand)
{
    uint32_t word;
    uintptr_t pc = facts->registers[PC_INDEX];
    struct a64_instruction decoded;
    if (memory_read(&word, pc, sizeof word) != sizeof word ||
        !a64_instruction_decode(word, &decoded))
        return 0;
    uintptr_t address = decoded.base < 0 ? pc : facts->registers[decoded.base];
    address += (uintptr_t)decoded.offset;
    if (decoded.index >= 0)
        address += index_value(facts, &decoded);
    memset(operand, 0, sizeof *operand);
    operand->base = decoded.base < 0 ? PC_INDEX : decoded.base;
    operand->index = decoded.index >= 0 && decoded.index != XZR ? decoded.index : -1;
    operand->scale = 1 << decoded.shift;
    operand->displacement = decoded.offset;
    operand->address = address;
    return 1;
}
