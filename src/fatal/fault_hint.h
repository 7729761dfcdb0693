/* fault_hint.h: the seam between the fault hints (fault_hint.c) and
 * their architecture's half (fault_hint_x86_64.c, fault_hint_aarch64.c,
 * chosen by the Makefile's FAULT_ARCH_SOURCES). World: signal-safe. */
#ifndef EXECINFO_EX_FAULT_HINT_H
#define EXECINFO_EX_FAULT_HINT_H

#include "crash_facts.h"

#define FAULT_HINT_GENERAL_REGISTERS CRASH_GENERAL_REGISTERS /* crash_registers.h */

/* Whether VALUE is an address a mapping can have. */
int fault_hint_arch_canonical(uintptr_t value);

/* The faulting instruction's memory operand with FACTS' registers, into
 * *OPERAND but its hints; 0 when it cannot be read or decoded. */
int fault_hint_arch_operand(const struct crash_facts *facts, struct crash_operand *operand);

#endif
