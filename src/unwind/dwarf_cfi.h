/* dwarf_cfi.h: the call-frame rules that hold at one instruction. */
#ifndef EXECINFO_EX_DWARF_CFI_H
#define EXECINFO_EX_DWARF_CFI_H

#include <stddef.h>
#include <stdint.h>

/* The architecture's DWARF registers: CFI_REGISTER_COUNT slots, CFI_SP,
 * CFI_FP, CFI_CALLEE_SAVED, the return-address column CFI_RETURN_ADDRESS
 * and the walk's pc slot CFI_PC (unwind_arch_x86_64.h, unwind_arch_aarch64.h). */
#include "unwind_arch.h"

/* Bit R of a set of registers (struct stack_walk's known). */
#define CFI_BIT(r) ((uint64_t)1 << (r))

enum cfi_rule_kind {
    CFI_SAME = 0,        /* unchanged (or never mentioned) */
    CFI_UNDEFINED,       /* no value: for the return address, the end */
    CFI_OFFSET,          /* saved at CFA + offset */
    CFI_VALUE_OFFSET,    /* the value is CFA + offset */
    CFI_REGISTER,        /* in register `number` */
    CFI_EXPRESSION,      /* saved at the address the expression computes */
    CFI_VALUE_EXPRESSION /* the value is what the expression computes */
};

/* Compact (8 bytes), because a handler on a small alternate stack holds
 * several of these frames at once. */
struct cfi_rule {
    uint8_t kind;
    uint8_t number;             /* CFI_REGISTER: the register */
    uint16_t expression_length;
    int32_t offset;             /* *_OFFSET: bytes from the CFA;
                                   *_EXPRESSION: the block's place from base */
};

struct cfi_frame {
    const uint8_t *base;        /* the module's mapping: expressions are relative to it */
    uint8_t cfa_is_expression;
    uint8_t cfa_register;
    uint8_t signal_frame;       /* CIE augmentation 'S' */
    uint16_t cfa_expression_length;
    int32_t cfa_offset;         /* or, for an expression, its place from base */
    struct cfi_rule rules[CFI_REGISTER_COUNT];
};

/* The DWARF block of an expression rule or CFA. */
static inline const uint8_t *cfi_expression(const struct cfi_frame *frame, int32_t place)
{
    return frame->base + place;
}

/* The rules at PC, found through _dl_find_object and the module's
 * .eh_frame_hdr search table. Returns 0, or -ENOENT when no FDE covers PC,
 * -EINVAL for CFI this reader does not understand. Signal-safe (reads the
 * module's mapped, read-only unwind sections; no lock, no malloc). */
int cfi_find_frame(uintptr_t pc, struct cfi_frame *frame);

#endif
