/* instruction_aarch64.h: the A64 load/store decoder shared by the fault
 * hints (the operand's address) and the fault access (direction, size).
 * World: signal-safe (arithmetic on one 32-bit instruction word). */
#ifndef EXECINFO_EX_INSTRUCTION_AARCH64_H
#define EXECINFO_EX_INSTRUCTION_AARCH64_H

#include <stdint.h>

#define A64_SP 31 /* Rn 31 is sp in a load/store's base */

enum a64_access { A64_NOT_MEMORY, A64_LOAD, A64_STORE, A64_READ_WRITE };

/* What one instruction says of its memory access. */
struct a64_instruction {
    enum a64_access access;
    unsigned size;          /* bytes of one access (a pair: both), 0: unknown */
    int base;               /* Rn (A64_SP: sp), -1: pc-relative (a literal) */
    int index;              /* Rm of a register offset, -1: none */
    int index_extend;       /* the option field: 2 UXTW, 3 LSL, 6 SXTW, 7 SXTX */
    int shift;              /* the index is shifted left by this */
    int64_t offset;         /* the immediate added to the base (0 after a post-index) */
};

/* Decode INSTRUCTION into *OUT. Returns whether it accesses memory. */
int a64_instruction_decode(uint32_t instruction, struct a64_instruction *out);

#endif
