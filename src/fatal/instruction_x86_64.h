/* instruction_x86_64.h: the x86-64 instruction walker shared by the fault
 * hints (the memory operand's address) and the fault access (its size).
 * World: signal-safe (arithmetic on a copy of the instruction's bytes). */
#ifndef EXECINFO_EX_INSTRUCTION_X86_64_H
#define EXECINFO_EX_INSTRUCTION_X86_64_H

#include <stddef.h>
#include <stdint.h>

#define X86_INSTRUCTION_MAX 15
#define X86_RSI 6
#define X86_RDI 7

/* What one instruction's bytes say of its memory operand. */
struct x86_instruction {
    int memory;                /* it has a memory operand (explicit or implicit) */
    int address_known;         /* base/index/scale/displacement give its address */
    int base, index, scale;    /* x86 register numbers, -1: none */
    int64_t displacement;
    int address32;             /* 0x67: the address is 32 bits */
    int string_pair;           /* movs, cmps: rsi or rdi, whichever is bad */
    unsigned size;             /* bytes accessed at once, 0: unknown */
};

/* Decode CODE[0..LENGTH) (fewer than 15 bytes near the end of a mapping
 * is fine) into *OUT. Returns OUT->memory. */
int x86_instruction_decode(const uint8_t *code, size_t length, struct x86_instruction *out);

#endif
