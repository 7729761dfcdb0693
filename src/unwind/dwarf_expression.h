/* dwarf_expression.h: the DWARF expressions that call-frame rules use. */
#ifndef EXECINFO_EX_DWARF_EXPRESSION_H
#define EXECINFO_EX_DWARF_EXPRESSION_H

#include <stddef.h>
#include <stdint.h>

struct stack_walk;

/* Evaluate the block with INITIAL pushed first (the CFA for register
 * rules; nothing for a CFA rule when HAS_INITIAL is 0). Registers and
 * memory come from WALK. Returns 0 and *RESULT, or -EINVAL for an
 * operation outside the small set compilers use in CFI, or -EFAULT.
 * Signal-safe. */
int dwarf_expression_evaluate(struct stack_walk *walk, const uint8_t *block, size_t length,
                              int has_initial, uintptr_t initial, uintptr_t *result);

#endif
