/* instruction_x86_64.c: the x86-64 instruction walker.
 * World: signal-safe (arithmetic on a copy of the instruction's bytes).
 *
 * It walks the prefixes, REX, VEX and EVEX, the opcode, ModRM, SIB and
 * displacement of one instruction, as far as its memory operand: where it
 * is (for the fault hints) and how many bytes one access moves (for the
 * crash report's "WRITE of size 8"). The sizes follow the Intel SDM's
 * operand columns; what is not listed (system instructions, the x87
 * environment, gathers, the rare EVEX forms) is size 0, unknown. It is
 * written by hand because the disassembler libraries are not signal-safe
 * (docs/SIGNAL_SAFETY.md). */
#include "instruction_x86_64.h"

#include <string.h>

/* The legacy prefixes that change what the opcode means. */
struct prefixes {
    int p66, pf2, pf3, rex_w, segment;
};

/* The SSE prefix column: none, 66, f3, f2 (as VEX.pp). */
enum { PP_NONE, PP_66, PP_F3, PP_F2 };

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

static unsigned operand_size(const struct prefixes *p)
{
    return p->rex_w ? 8 : p->p66 ? 2 : 4;
}

/* push, pop, call's and ret's stack slot: 64 bits unless 0x66. */
static unsigned stack_size(const struct prefixes *p)
{
    return p->p66 ? 2 : 8;
}

static int sse_column(const struct prefixes *p)
{
    return p->pf3 ? PP_F3 : p->pf2 ? PP_F2 : p->p66 ? PP_66 : PP_NONE;
}

/* x87 memory forms (d8..df), by opcode and ModRM.reg. */
static unsigned x87_size(uint8_t opcode, int reg)
{
    static const unsigned char sizes[8][8] = {
        { 4, 4, 4, 4, 4, 4, 4, 4 },   /* d8: float32 arithmetic */
        { 4, 0, 4, 4, 0, 2, 0, 2 },   /* d9: fld/fst/fstp m32, fldcw, fnstcw */
        { 4, 4, 4, 4, 4, 4, 4, 4 },   /* da: int32 arithmetic */
        { 4, 4, 4, 4, 0, 10, 0, 10 }, /* db: fild/fisttp/fist/fistp m32, fld/fstp m80 */
        { 8, 8, 8, 8, 8, 8, 8, 8 },   /* dc: float64 arithmetic */
        { 8, 8, 8, 8, 0, 0, 0, 2 },   /* dd: fld/fisttp/fst/fstp m64, fnstsw */
        { 2, 2, 2, 2, 2, 2, 2, 2 },   /* de: int16 arithmetic */
        { 2, 2, 2, 2, 10, 8, 10, 8 }, /* df: m16 int, fbld, fild m64, fbstp, fistp m64 */
    };
    return sizes[opcode - 0xd8][reg];
}

/* One-byte opcodes with a ModRM. */
static unsigned legacy_size(uint8_t c, int reg, const struct prefixes *p)
{
    if (c < 0x40)
        return c & 1 ? operand_size(p) : 1; /* add..cmp: even opcodes are byte ops */
    if (c >= 0xd8 && c <= 0xdf)
        return x87_size(c, reg);
    switch (c) {
    case 0x63: return 4; /* movsxd: a 32-bit source */
    case 0x80: case 0x82: case 0x84: case 0x86: case 0x88: case 0x8a:
    case 0xc0: case 0xc6: case 0xd0: case 0xd2: case 0xf6: case 0xfe:
        return 1;
    case 0x8c: case 0x8e: return 2; /* mov to or from a segment register */
    case 0x8d: return 0;            /* lea: no access */
    case 0x8f: return stack_size(p);
    case 0xff:
        if (reg <= 1)
            return operand_size(p);
        if (reg == 2 || reg == 4)
            return 8; /* call, jmp through memory */
        return reg == 6 ? stack_size(p) : 0;
    default:
        return operand_size(p); /* 69 6b 81 83 85 87 89 8b c1 c7 d1 d3 f7 */
    }
}

/* The string instructions, the moffs moves and the stack's implicit slot. */
static int implicit_operand(const uint8_t *code, size_t length, size_t at, uint8_t opcode,
                            const struct prefixes *p, struct x86_instruction *out)
{
    out->memory = out->address_known = 1;
    out->size = opcode & 1 ? operand_size(p) : 1;
    switch (opcode) {
    case 0xa4: case 0xa5: case 0xa6: case 0xa7:
        out->base = X86_RSI;
        out->string_pair = 1;
        return 1;
    case 0xaa: case 0xab: case 0xae: case 0xaf:
        out->base = X86_RDI;
        return 1;
    case 0x6c: case 0x6d:
        out->base = X86_RDI;
        out->size = opcode == 0x6c ? 1 : p->p66 ? 2 : 4;
        return 1;
    case 0x6e: case 0x6f:
        out->base = X86_RSI;
        out->size = opcode == 0x6e ? 1 : p->p66 ? 2 : 4;
        return 1;
    case 0xac: case 0xad:
        out->base = X86_RSI;
        return 1;
    case 0xa0: case 0xa1: case 0xa2: case 0xa3: {
        size_t size = out->address32 ? 4 : 8;
        if (at + size > length)
            return out->address_known = 0, 1;
        uint64_t value = 0;
        memcpy(&value, code + at, size);
        out->displacement = (int64_t)value;
        return 1;
    }
    }
    /* Stack slots: push, pop, pushf, popf, push imm, call, ret, leave. */
    out->address_known = 0;
    out->size = stack_size(p);
    if ((opcode >= 0x50 && opcode <= 0x5f) || opcode == 0x68 || opcode == 0x6a ||
        opcode == 0x9c || opcode == 0x9d)
        return 1;
    out->size = 8;
    if (opcode == 0xe8 || opcode == 0xc2 || opcode == 0xc3 || opcode == 0xc9)
        return 1;
    out->size = 1;
    if (opcode == 0xd7)
        return 1; /* xlat: the byte at [rbx+al] */
    out->memory = 0;
    out->size = 0;
    return 0;
}

/* ModRM, SIB and displacement at CODE[AT]: whether there is a memory
 * operand, and its address when the registers show it. */
static int memory_operand(const uint8_t *code, size_t length, size_t at, int x, int b, int evex,
                          struct x86_instruction *out)
{
    if (at >= length)
        return 0;
    uint8_t modrm = code[at++];
    int mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 0; /* a register operand */
    out->memory = 1;
    int disp32 = mod == 2;
    if (rm == 4) {
        if (at >= length)
            return 1;
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
        return 1; /* rip-relative: canonical by construction */
    } else {
        out->base = rm | b << 3;
    }
    if (mod == 1) {
        if (at >= length)
            return 1;
        out->displacement = (int8_t)code[at];
        /* EVEX scales a disp8 by N, its tuple's memory size: the caller's. */
        if (evex && out->displacement != 0)
            return 2;
    } else if (disp32) {
        if (at + 4 > length)
            return 1;
        int32_t value;
        memcpy(&value, code + at, 4);
        out->displacement = value;
    }
    out->address_known = 1;
    return 1;
}

/* 0f-map (1), 0f38 (2) and 0f3a (3) SSE/AVX opcodes: VLEN is the vector
 * length (8 for MMX, 16 SSE, 32 AVX, 64 AVX-512), PP the prefix column,
 * W the REX.W/VEX.W bit. */
static unsigned vector_size(int map, uint8_t op, int pp, unsigned vlen, int w)
{
    unsigned scalar = pp == PP_F3 ? 4 : 8; /* ss or sd */
    if (map == 2) {
        switch (op) {
        case 0x18: case 0x58: return 4;  /* broadcast a dword */
        case 0x19: case 0x59: return 8;
        case 0x1a: case 0x5a: return 16;
        case 0x78: return 1;
        case 0x79: return 2;
        case 0x20: case 0x23: case 0x25: case 0x30: case 0x33: case 0x35: return vlen / 2;
        case 0x21: case 0x24: case 0x31: case 0x34: return vlen / 4;
        case 0x22: case 0x32: return vlen / 8;
        case 0xf2: case 0xf3: case 0xf5: case 0xf6: case 0xf7: return w ? 8 : 4; /* BMI */
        /* FMA's scalar forms (vfmadd213sd...): ss or sd by W. */
        case 0x99: case 0x9b: case 0x9d: case 0x9f: case 0xa9: case 0xab: case 0xad: case 0xaf:
        case 0xb9: case 0xbb: case 0xbd: case 0xbf:
            return w ? 8 : 4;
        default: return vlen;
        }
    }
    if (map == 3) {
        switch (op) {
        case 0x14: case 0x20: return 1;
        case 0x15: return 2;
        case 0x17: case 0x21: case 0x0a: return 4;
        case 0x0b: return 8;
        case 0x16: case 0x22: return w ? 8 : 4;
        case 0x18: case 0x19: case 0x38: case 0x39: return 16;
        case 0x1a: case 0x1b: case 0x3a: case 0x3b: return 32;
        /* AMD's FMA4 scalar forms: vfmaddss (4), vfmaddsd (8). */
        case 0x6a: case 0x6e: case 0x7a: case 0x7e: return 4;
        case 0x6b: case 0x6f: case 0x7b: case 0x7f: return 8;
        default: return vlen;
        }
    }
    switch (op) {
    case 0x10: case 0x11: case 0x51: case 0x52: case 0x53: case 0x54: case 0x55: case 0x56:
    case 0x57: case 0x58: case 0x59: case 0x5c: case 0x5d: case 0x5e: case 0x5f: case 0xc2:
        return pp == PP_F3 || pp == PP_F2 ? scalar : vlen;
    case 0x12: case 0x16:
        if (pp == PP_F3)
            return vlen;                           /* movsldup, movshdup */
        if (pp == PP_F2)
            return vlen == 16 ? 8 : vlen;          /* movddup */
        return 8;                                  /* movlps, movhps */
    case 0x13: case 0x17: case 0xd6: return 8;
    case 0x2a: return pp == PP_F3 || pp == PP_F2 ? (w ? 8 : 4) : 8;
    case 0x2c: case 0x2d: return pp == PP_66 ? 16 : pp == PP_F3 ? 4 : 8;
    case 0x2e: case 0x2f: return pp == PP_66 ? 8 : 4;
    case 0x5a: return pp == PP_F3 || pp == PP_F2 ? scalar : pp == PP_66 ? vlen : vlen / 2;
    case 0x6e: return w ? 8 : 4;
    case 0x7e: return pp == PP_F3 ? 8 : w ? 8 : 4;
    case 0xc4: return 2;
    case 0xae: return 4; /* vldmxcsr, vstmxcsr (VEX; the legacy ones are general) */
    case 0x60: case 0x61: case 0x62: return vlen == 8 ? 4 : vlen; /* MMX punpckl*: m32 */
    case 0xe6: return pp == PP_F3 ? vlen / 2 : vlen;
    default: return vlen;
    }
}

/* Two-byte (0f xx) opcodes that are not SSE: general registers. */
static unsigned two_byte_general_size(uint8_t op, int reg, const struct prefixes *p, int *known)
{
    *known = 1;
    if (op >= 0x40 && op <= 0x4f)
        return operand_size(p); /* cmovcc */
    if (op >= 0x90 && op <= 0x9f)
        return 1; /* setcc */
    switch (op) {
    case 0xb6: case 0xbe: case 0xb0: case 0xc0: return 1; /* movzx/movsx m8, cmpxchg, xadd */
    case 0xb7: case 0xbf: return 2;                       /* movzx/movsx m16 */
    case 0xa3: case 0xab: case 0xb3: case 0xbb: case 0xba: case 0xaf: case 0xbc: case 0xbd:
    case 0xb8: case 0xb1: case 0xc1: case 0xc3: case 0xa4: case 0xa5: case 0xac: case 0xad:
        return operand_size(p);
    case 0xc7: return reg == 1 ? (p->rex_w ? 16 : 8) : 0; /* cmpxchg8b, cmpxchg16b */
    case 0xae:
        if (reg == 2 || reg == 3)
            return 4; /* ldmxcsr, stmxcsr */
        return reg <= 1 ? 512 : 0; /* fxsave, fxrstor */
    case 0x00: case 0x01: case 0x0d: case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c:
    case 0x1d: case 0x1e: case 0x1f:
        return 0; /* system, prefetch, nop: no size worth saying */
    }
    *known = 0;
    return 0;
}

/* VEX (c4, c5) and EVEX (62): the map, the inverted X and B bits, W, L,
 * pp, then the opcode; every such instruction has a ModRM but vzeroupper/all. */
static int vex_operand(const uint8_t *code, size_t length, size_t at, uint8_t escape,
                       struct x86_instruction *out)
{
    size_t payload = escape == 0xc5 ? 1 : escape == 0xc4 ? 2 : 3;
    if (at + payload + 1 > length)
        return 0;
    int x = 0, b = 0, map = 1, w = 0, broadcast = 0;
    uint8_t last = code[at + payload - 1]; /* W vvvv L pp (c4, c5), z L'L b V' aaa (62) */
    int pp = escape == 0x62 ? code[at + 1] & 3 : last & 3;
    unsigned vlen = last & 4 ? 32 : 16;
    if (escape != 0xc5) {
        x = !(code[at] & 0x40);
        b = !(code[at] & 0x20);
        map = code[at] & (escape == 0xc4 ? 0x1f : 0x03);
        w = (code[at + 1] >> 7) & 1;
    }
    if (escape == 0x62) {
        vlen = 16u << ((last >> 5) & 3);
        broadcast = (last >> 4) & 1;
    }
    uint8_t opcode = code[at + payload];
    at += payload + 1;
    if (map < 1 || map > 3 || (map == 1 && opcode == 0x77))
        return 0;
    /* VEX.pp is 66, f3, f2; the SSE column order here is 66, f3, f2 too. */
    int column = pp == 1 ? PP_66 : pp == 2 ? PP_F3 : pp == 3 ? PP_F2 : PP_NONE;
    int gather = map == 2 && ((opcode >= 0x90 && opcode <= 0x93) ||
                              (opcode >= 0xa0 && opcode <= 0xa3) || opcode == 0xc6 ||
                              opcode == 0xc7);
    int memory = memory_operand(code, length, at, x, b, escape == 0x62, out);
    if (!memory)
        return 0;
    /* Gathers, scatters and their prefetches index with a vector register. */
    if (gather) {
        out->address_known = 0;
        return 1;
    }
    out->size = broadcast ? (w ? 8u : 4u) : vector_size(map, opcode, column, vlen, w);
    /* disp8*N: N is the bytes one access moves for the full, half,
     * quarter, scalar and broadcast tuples alike, the size just found. */
    if (memory == 2 && out->size != 0) {
        out->displacement *= out->size;
        out->address_known = 1;
    }
    return 1;
}

static size_t read_prefixes(const uint8_t *code, size_t length, struct prefixes *p,
                            struct x86_instruction *out)
{
    size_t at = 0;
    for (; at < length; at++) {
        uint8_t c = code[at];
        if (c == 0x64 || c == 0x65)
            p->segment = 1; /* fs:, gs: a base the registers do not show */
        else if (c == 0x67)
            out->address32 = 1;
        else if (c == 0x66)
            p->p66 = 1;
        else if (c == 0xf2 || c == 0xf3) {
            p->pf2 = c == 0xf2; /* the last of f2 and f3 counts */
            p->pf3 = c == 0xf3;
        } else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e && c != 0x26)
            break;
    }
    return at;
}

/* 0f, 0f38 and 0f3a: the opcode after the escape at CODE[AT]. */
static int two_byte(const uint8_t *code, size_t length, size_t at, int rex,
                    const struct prefixes *p, struct x86_instruction *out)
{
    if (at >= length)
        return 0;
    uint8_t opcode = code[at++];
    int map = 1;
    if (opcode == 0x38 || opcode == 0x3a) {
        map = opcode == 0x38 ? 2 : 3;
        if (at >= length)
            return 0;
        opcode = code[at++]; /* all of those maps have a ModRM */
    } else if (!two_byte_has_modrm(opcode)) {
        return 0;
    }
    if (!memory_operand(code, length, at, (rex >> 1) & 1, rex & 1, 0, out))
        return 0;
    int reg = at < length ? (code[at] >> 3) & 7 : 0;
    int known = 0;
    if (map == 1)
        out->size = two_byte_general_size(opcode, reg, p, &known);
    else if (map == 2 && (opcode == 0xf0 || opcode == 0xf1) && !p->p66) {
        known = 1; /* movbe; crc32 (f2) of a byte or a word/dword/qword */
        out->size = opcode == 0xf0 && p->pf2 ? 1 : operand_size(p);
    }
    if (!known) {
        int column = sse_column(p);
        /* Without a prefix, 0f 60..7f and d0..ff are MMX: 8 bytes. */
        int mmx = column == PP_NONE && (map != 1 || (opcode >= 0x60 && opcode <= 0x7f) ||
                                        opcode >= 0xd0);
        out->size = vector_size(map, opcode, column, mmx ? 8 : 16, p->rex_w);
    }
    return 1;
}

int x86_instruction_decode(const uint8_t *code, size_t length, struct x86_instruction *out)
{
    struct prefixes p = { 0 };
    memset(out, 0, sizeof *out);
    out->base = out->index = -1;
    out->scale = 1;
    size_t at = read_prefixes(code, length, &p, out);
    int rex = 0;
    if (at < length && (code[at] & 0xf0) == 0x40)
        rex = code[at++];
    p.rex_w = (rex >> 3) & 1;
    if (at >= length)
        return 0;
    uint8_t opcode = code[at++];
    int found;
    if (opcode == 0xc4 || opcode == 0xc5 || opcode == 0x62)
        found = !rex && vex_operand(code, length, at, opcode, out);
    else if (opcode == 0x0f)
        found = two_byte(code, length, at, rex, &p, out);
    else if (!legacy_has_modrm(opcode))
        found = implicit_operand(code, length, at, opcode, &p, out);
    else if ((found = memory_operand(code, length, at, (rex >> 1) & 1, rex & 1, 0, out)))
        out->size = legacy_size(opcode, (code[at] >> 3) & 7, &p);
    if (!found) {
        memset(out, 0, sizeof *out);
        out->base = out->index = -1;
        out->scale = 1;
        return 0;
    }
    if (opcode == 0x8d) /* lea computes an address and reads nothing */
        out->memory = 0;
    if (p.segment)
        out->address_known = 0;
    return out->memory;
}
