/* fault_hint.c: where the address of a fault without one may be seen.
 * World: signal-safe (process_vm_readv of the faulting instruction; the
 * rest is arithmetic on the collected registers).
 *
 * A general-protection fault (a non-canonical address, such as a pointer
 * read from a freed block that holds the free fill 0xefef...) reaches the
 * program as SIGSEGV with SI_KERNEL and si_addr 0: the kernel does not
 * know the address. The instruction does: its memory operand is decoded
 * here (by instruction_x86_64.c: legacy, VEX and EVEX encodings, ModRM,
 * SIB and displacement; the string instructions' rsi and rdi; moffs), and the registers that hold a
 * non-canonical value or the free-fill pattern are named, as ASan's hints
 * do. What cannot be decoded (a fs:/gs: base, rip-relative, VSIB, an
 * EVEX compressed displacement) leaves only the register hints. */
#define _GNU_SOURCE
#include "crash_facts.h"
#include "instruction_x86_64.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define NEAR_FILL (64 * 1024)
#define GENERAL_REGISTERS 16      /* rax..r15 of crash_register_names */

/* x86 register number (ModRM, SIB: rax rcx rdx rbx rsp rbp rsi rdi r8..)
 * to the index in crash_register_names (rax rbx rcx rdx rsi rdi rbp rsp r8..). */
static const int crash_index_of_x86[16] = { 0, 2, 3, 1, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

static int is_canonical(uintptr_t value)
{
    return (uintptr_t)((int64_t)(value << 16) >> 16) == value;
}

static unsigned hints_of(uintptr_t value, int free_fill)
{
    unsigned hints = is_canonical(value) ? 0 : CRASH_HINT_NON_CANONICAL;
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

static uintptr_t register_value(const struct crash_facts *facts, int x86)
{
    return facts->registers[crash_index_of_x86[x86]];
}

static void collect_operand(struct crash_facts *facts)
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
        return;
    if (decoded.string_pair && is_canonical(register_value(facts, X86_RSI)))
        decoded.base = X86_RDI;
    uintptr_t address = (uintptr_t)decoded.displacement;
    if (decoded.base >= 0)
        address += register_value(facts, decoded.base);
    if (decoded.index >= 0)
        address += register_value(facts, decoded.index) * (uintptr_t)decoded.scale;
    if (decoded.address32)
        address &= 0xffffffffu;
    struct crash_operand *operand = &facts->operand;
    operand->base = decoded.base >= 0 ? crash_index_of_x86[decoded.base] : -1;
    operand->index = decoded.index >= 0 ? crash_index_of_x86[decoded.index] : -1;
    operand->scale = decoded.scale;
    operand->displacement = decoded.displacement;
    operand->address = address;
    operand->hints = hints_of(address, facts->free_fill);
    facts->have_operand = 1;
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
    collect_operand(facts);
    for (int i = 0; i < GENERAL_REGISTERS; i++) {
        /* With the operand known, only its registers explain it. */
        if (facts->have_operand && i != facts->operand.base && i != facts->operand.index)
            continue;
        facts->register_hints[i] = hints_of(facts->registers[i], facts->free_fill);
    }
}
