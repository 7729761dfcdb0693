/* fault_hint.c: where the address of a fault without one may be seen.
 * World: signal-safe (process_vm_readv of the faulting instruction; the
 * rest is arithmetic on the collected registers).
 *
 * A general-protection fault (a non-canonical address, such as a pointer
 * read from a freed block that holds the free fill 0xefef...) reaches the
 * program as SIGSEGV with SI_KERNEL and si_addr 0: the kernel does not
 * know the address. The instruction does: its memory operand is decoded
 * here (legacy, VEX and EVEX encodings, ModRM, SIB and displacement; the
 * string instructions' rsi and rdi; moffs), and the registers that hold a
 * non-canonical value or the free-fill pattern are named, as ASan's hints
 * do. What cannot be decoded (a fs:/gs: base, rip-relative, VSIB, an
 * EVEX compressed displacement) leaves only the register hints. */
#define _GNU_SOURCE
#include "crash_facts.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define INSTRUCTION_MAX 15
#define NEAR_FILL (64 * 1024)
#define GENERAL_REGISTERS 16      /* rax..r15 of crash_register_names */

/* x86 register number (ModRM, SIB: rax rcx rdx rbx rsp rbp rsi rdi r8..)
 * to the index in crash_register_names (rax rbx rcx rdx rsi rdi rbp rsp r8..). */
static const int crash_index_of_x86[16] = { 0, 2, 3, 1, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };
#define X86_RSI 6
#define X86_RDI 7

struct decoded {
    int base, index, scale;       /* x86 register numbers, -1: none */
    int64_t displacement;
    int address32;                /* 0x67: the address is 32 bits */
    int string_pair;              /* movs, cmps: rsi or rdi, whichever is bad */
};

static int legacy_has_modrm(uint8_t c)
{
    if (c < 0x40)
        return (c & 7) < 4;
    switch (c >> 4) {
    case 0x6: return c == 0x63 || c == 0x69 || c == 0x6b;
    case 0x8: return 1;
    case 0xc: return c == 0xc0 || c == 0xc1 || c == 0xc6 || c == 0xc7;
    case 0xd: return c <= 0xd3 || c >= 0xd8;
    case 0xf: return c == 0xf6 || c == 0xf7 || c == 0xfe || c == 0xff;
    default: return 0;
    }
}

static int two_byte_has_modrm(uint8_t c)
{
    switch (c) {
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
    case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
        return 0;
    default:
        return !(c >= 0x30 && c <= 0x37) && !(c >= 0x80 && c <= 0x8f) && !(c >= 0xc8 && c <= 0xcf);
    }
}

/* The string instructions and moffs moves: memory without a ModRM. */
static int implicit_operand(const uint8_t *code, size_t length, size_t at, uint8_t opcode,
                            struct decoded *out)
{
    switch (opcode) {
    case 0xa4: case 0xa5: case 0xa6: case 0xa7:
        out->base = X86_RSI;
        out->string_pair = 1;
        return 1;
    case 0xaa: case 0xab: case 0xae: case 0xaf: case 0x6c: case 0x6d:
        out->base = X86_RDI;
        return 1;
    case 0xac: case 0xad: case 0x6e: case 0x6f:
        out->base = X86_RSI;
        return 1;
    case 0xa0: case 0xa1: case 0xa2: case 0xa3: {
        size_t size = out->address32 ? 4 : 8;
        if (at + size > length)
            return 0;
        uint64_t value = 0;
        memcpy(&value, code + at, size);
        out->displacement = (int64_t)value;
        return 1;
    }
    default:
        return 0;
    }
}

/* ModRM, SIB and displacement at CODE[AT]. */
static int memory_operand(const uint8_t *code, size_t length, size_t at, int x, int b, int evex,
                          struct decoded *out)
{
    if (at >= length)
        return 0;
    uint8_t modrm = code[at++];
    int mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 0; /* a register operand */
    int disp32 = mod == 2;
    if (rm == 4) {
        if (at >= length)
            return 0;
        uint8_t sib = code[at++];
        int index = ((sib >> 3) & 7) | x << 3;
        if (index != 4) {
            out->index = index;
            out->scale = 1 << (sib >> 6);
        }
        out->base = (sib & 7) | b << 3;
        if ((sib & 7) == 5 && mod == 0) {
            out->base = -1;
            disp32 = 1;
        }
    } else if (rm == 5 && mod == 0) {
        return 0; /* rip-relative: canonical by construction */
    } else {
        out->base = rm | b << 3;
    }
    if (mod == 1) {
        if (at >= length)
            return 0;
        out->displacement = (int8_t)code[at];
        /* EVEX scales a disp8 by the operand size, which only the opcode tells. */
        if (evex && out->displacement != 0)
            return 0;
    } else if (disp32) {
        if (at + 4 > length)
            return 0;
        int32_t value;
        memcpy(&value, code + at, 4);
        out->displacement = value;
    }
    return 1;
}

/* VEX (c4, c5) and EVEX (62): the map, the inverted X and B bits, then
 * the opcode; every such instruction has a ModRM but vzeroupper/all. */
static int vex_operand(const uint8_t *code, size_t length, size_t at, uint8_t escape,
                       struct decoded *out)
{
    size_t payload = escape == 0xc5 ? 1 : escape == 0xc4 ? 2 : 3;
    if (at + payload + 1 > length)
        return 0;
    int x = 0, b = 0, map = 1;
    if (escape != 0xc5) {
        x = !(code[at] & 0x40);
        b = !(code[at] & 0x20);
        map = code[at] & (escape == 0xc4 ? 0x1f : 0x03);
    }
    uint8_t opcode = code[at + payload];
    at += payload + 1;
    if (map < 1 || map > 3 || (map == 1 && opcode == 0x77))
        return 0;
    /* Gathers, scatters and their prefetches index with a vector register. */
    if (map == 2 && ((opcode >= 0x90 && opcode <= 0x93) || (opcode >= 0xa0 && opcode <= 0xa3) ||
                     opcode == 0xc6 || opcode == 0xc7))
        return 0;
    return memory_operand(code, length, at, x, b, escape == 0x62, out);
}

static int decode(const uint8_t *code, size_t length, struct decoded *out)
{
    size_t at = 0;
    int rex = 0;
    out->base = out->index = -1;
    out->scale = 1;
    for (; at < length; at++) {
        uint8_t c = code[at];
        if (c == 0x64 || c == 0x65)
            return 0; /* fs:, gs: a base the registers do not show */
        if (c == 0x67)
            out->address32 = 1;
        else if (c != 0xf0 && c != 0xf2 && c != 0xf3 && c != 0x2e && c != 0x36 && c != 0x3e &&
                 c != 0x26 && c != 0x66)
            break;
    }
    if (at < length && (code[at] & 0xf0) == 0x40)
        rex = code[at++];
    if (at >= length)
        return 0;
    uint8_t opcode = code[at++];
    if (opcode == 0xc4 || opcode == 0xc5 || opcode == 0x62)
        return !rex && vex_operand(code, length, at, opcode, out);
    int x = (rex >> 1) & 1, b = rex & 1;
    if (opcode != 0x0f) {
        if (!legacy_has_modrm(opcode))
            return implicit_operand(code, length, at, opcode, out);
        return memory_operand(code, length, at, x, b, 0, out);
    }
    if (at >= length)
        return 0;
    opcode = code[at++];
    if (opcode == 0x38 || opcode == 0x3a)
        at++; /* the third opcode byte; all of those maps have a ModRM */
    else if (!two_byte_has_modrm(opcode))
        return 0;
    return memory_operand(code, length, at, x, b, 0, out);
}

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
    uint8_t code[INSTRUCTION_MAX];
    uintptr_t pc = facts->registers[16];
    struct iovec local = { code, sizeof code };
    struct iovec remote = { (void *)pc, sizeof code };
    /* Short near the end of a mapping: decode what was there. */
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    struct decoded decoded;
    memset(&decoded, 0, sizeof decoded);
    if (got <= 0 || !decode(code, (size_t)got, &decoded))
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
