/* fault_hint.c: where the address of a fault without one may be seen.
 * World: signal-safe (process_vm_readv of the faulting instruction; the
 * rest is arithmetic on the collected registers).
 *
 * A general-protection fault (a non-canonical address, such as a pointer
 * read from a freed block that holds the free fill 0xefef...) reaches the
 * program as SIGSEGV with SI_KERNEL and si_addr 0: the kernel does not
 * know the address. The instruction does: its memory operand is decoded
 * by the architecture's file (fault_hint_x86_64.c), and the registers that
 * hold a non-canonical value or the free-fill pattern are named, as ASan's
 * hints do. What cannot be decoded leaves only the register hints. */
#define _GNU_SOURCE
#include "crash_facts.h"
#include "fault_hint.h"

#define NEAR_FILL (64 * 1024)
static unsigned hints_of(uintptr_t value, int free_fill)
{
    unsigned hints = fault_hint_arch_canonical(value) ? 0 : CRASH_HINT_NON_CANONICAL;
    if (free_fill >= 0) {
        uintptr_t pattern = (uintptr_t)free_fill * (uintptr_t)0x0101010101010101u;
        uintptr_t distance = value > pattern ? value - pattern : pattern - value;
        if (distance == 0)
            hints |= CRASH_HINT_FREE_FILL;
        else if (distance < NEAR_FILL)
            hints |= CRASH_HINT_NEAR_FREE_FILL;
    }
    return hints;
}

void crash_collect_fault_hints(struct crash_facts *facts, int free_fill)
{
    if (!facts->have_info || facts->code != SI_KERNEL)
        return;
    /* SI_KERNEL: si_addr is 0 for every signal; a fault's is unknown. */
    facts->has_address = 0;
    facts->fault_address = 0;
    if (facts->signo != SIGSEGV && facts->signo != SIGBUS)
        return;
    facts->address_unknown = 1;
    /* 0x00 and 0xff fill canonical values: every zero would match. */
    facts->free_fill = free_fill > 0 && free_fill < 0xff ? free_fill : -1;
    if (!facts->have_registers)
        return;
    if (fault_hint_arch_operand(facts, &facts->operand)) {
        facts->operand.hints = hints_of(facts->operand.address, facts->free_fill);
        facts->have_operand = 1;
    }
    for (int i = 0; i < FAULT_HINT_GENERAL_REGISTERS; i++) {
        /* With the operand known, only its registers explain it. */
        if (facts->have_operand && i != facts->operand.base && i != facts->operand.index)
            continue;
        facts->register_hints[i] = hints_of(facts->registers[i], facts->free_fill);
    }
}
