/* instruction_aarch64.c: the A64 load/store decoder (the Arm ARM's "Loads
 * and Stores" encodings): what an instruction accesses, how many bytes at
 * once, and how its address is formed.
 * World: signal-safe (arithmetic on one instruction word).
 *
 * Hand-written rather than taken from a disassembler library: it runs in
 * the crash handler (no malloc, no libc), and it needs four fields of one
 * 32-bit word. Covered: single registers (unsigned offset, unscaled, pre-
 * and post-index, unprivileged, register offset, pointer-authenticated),
 * pairs, literals, exclusives and compare-and-swap, atomics. The SIMD
 * structure loads (LD1..LD4) are known as loads or stores of unknown size;
 * memory-tagging instructions are not decoded. */
#define _GNU_SOURCE
#include "instruction_aarch64.h"

#include <string.h>

static uint32_t bits(uint32_t word, unsigned low, unsigned count)
{
    return (word >> low) & ((1u << count) - 1);
}

static int64_t signed_bits(uint32_t word, unsigned low, unsigned count)
{
    int64_t value = bits(word, low, count);
    return value >= (int64_t)1 << (count - 1) ? value - ((int64_t)1 << count) : value;
}

static unsigned log2_of(unsigned size)
{
    unsigned scale = 0;
    while (size > 1u << scale)
        scale++;
    return scale;
}

/* One register's load or store (classes that share size, V and opc). */
static int single_register(uint32_t word, struct a64_instruction *out)
{
    unsigned size = bits(word, 30, 2), simd = bits(word, 26, 1), opc = bits(word, 22, 2);
    if (simd) {
        out->size = size == 0 && (opc & 2) ? 16 : 1u << size;
        out->access = opc & 1 ? A64_LOAD : A64_STORE;
        return 1;
    }
    if (opc == 2 && size == 3)
        return 0;   /* prfm: a prefetch does not fault */
    if (opc == 3 && size >= 2)
        return 0;   /* unallocated */
    out->size = 1u << size;
    out->access = opc == 0 ? A64_STORE : A64_LOAD;
    return 1;
}

static int register_unsigned_offset(uint32_t word, struct a64_instruction *out)
{
    if (!single_register(word, out))
        return 0;
    out->offset = (int64_t)bits(word, 10, 12) << log2_of(out->size);
    return 1;
}

static int register_other_offsets(uint32_t word, struct a64_instruction *out)
{
    unsigned mode = bits(word, 10, 2);
    if (!bits(word, 21, 1)) {          /* imm9: unscaled, post, unprivileged, pre */
        if (!single_register(word, out))
            return 0;
        out->offset = mode == 1 ? 0 : signed_bits(word, 12, 9);
        return 1;
    }
    if (mode == 2) {                   /* register offset */
        if (!single_register(word, out))
            return 0;
        out->index = (int)bits(word, 16, 5);
        out->index_extend = (int)bits(word, 13, 3);
        out->shift = bits(word, 12, 1) ? (int)log2_of(out->size) : 0;
        return 1;
    }
    if (bits(word, 26, 1))
        return 0;
    if (mode == 0) {                   /* ldadd, ldclr, swp...: read and write */
        out->access = A64_READ_WRITE;
        out->size = 1u << bits(word, 30, 2);
        return 1;
    }
    if (bits(word, 30, 2) != 3)        /* ldraa, ldrab: S:imm9, scaled by 8 */
        return 0;
    out->access = A64_LOAD;
    out->size = 8;
    /* Either form (bit 11: the pre-index writes back) reads base + offset. */
    out->offset = signed_bits((bits(word, 22, 1) << 9) | bits(word, 12, 9), 0, 10) * 8;
    return 1;
}

static int register_pair(uint32_t word, struct a64_instruction *out)
{
    unsigned opc = bits(word, 30, 2), simd = bits(word, 26, 1), load = bits(word, 22, 1);
    unsigned one;
    if (simd)
        one = opc == 3 ? 0 : 4u << opc;
    else
        one = opc == 0 ? 4 : opc == 1 ? (load ? 4 : 8) : opc == 2 ? 8 : 0;
    if (one == 0)
        return 0;
    out->access = load ? A64_LOAD : A64_STORE;
    out->size = 2 * one;
    out->offset = bits(word, 23, 2) == 1 ? 0 : signed_bits(word, 15, 7) * (int64_t)one;
    return 1;
}

static int exclusive(uint32_t word, struct a64_instruction *out)
{
    unsigned size = 1u << bits(word, 30, 2);
    int pair = bits(word, 21, 1), ordered = bits(word, 23, 1);
    if (pair && ordered)               /* cas family: compare and swap */
        out->access = A64_READ_WRITE;
    else
        out->access = bits(word, 22, 1) ? A64_LOAD : A64_STORE;
    out->size = pair && !ordered && size >= 4 ? 2 * size : size;
    return 1;
}

static int literal(uint32_t word, struct a64_instruction *out)
{
    unsigned opc = bits(word, 30, 2);
    if (bits(word, 26, 1))
        out->size = opc == 3 ? 0 : 4u << opc;
    else
        out->size = opc == 3 ? 0 : opc == 1 ? 8 : 4;
    if (out->size == 0)
        return 0;                      /* prfm (literal) */
    out->access = A64_LOAD;
    out->base = -1;
    out->offset = signed_bits(word, 5, 19) * 4;
    return 1;
}

int a64_instruction_decode(uint32_t word, struct a64_instruction *out)
{
    memset(out, 0, sizeof *out);
    out->index = -1;
    out->base = (int)bits(word, 5, 5);
    int memory = 0;
    if ((word & 0x3b000000u) == 0x39000000u)
        memory = register_unsigned_offset(word, out);
    else if ((word & 0x3b000000u) == 0x38000000u)
        memory = register_other_offsets(word, out);
    else if ((word & 0x3a000000u) == 0x28000000u)
        memory = register_pair(word, out);
    else if ((word & 0x3f000000u) == 0x08000000u)
        memory = exclusive(word, out);
    else if ((word & 0x3b000000u) == 0x18000000u)
        memory = literal(word, out);
    else if ((word & 0xbe000000u) == 0x0c000000u) {  /* ld1..ld4, st1..st4 */
        out->access = bits(word, 22, 1) ? A64_LOAD : A64_STORE;
        memory = 1;
    }
    if (!memory)
        out->access = A64_NOT_MEMORY;
    return memory;
}
