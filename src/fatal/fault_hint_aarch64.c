/* fault_hint_aarch64.c: the fault hints on aarch64: left out (issue 27,
 * docs/CRASH_REPORT.md).
 * World: signal-safe (pure).
 *
 * On x86-64 (fault_hint.c) a general-protection fault reaches the program
 * without an address (SI_KERNEL, si_addr 0), and the decoded instruction
 * names the operand. An aarch64 data abort carries its address in FAR_EL1,
 * which the kernel gives as si_addr (a tagged pointer's top byte cleared),
 * so the report already says where the fault was; decoding the A64 load or
 * store to name its base register is not done. What stays the same: a
 * signal with SI_KERNEL has no address, and the report says so. */
#define _GNU_SOURCE
#include "crash_facts.h"

void crash_collect_fault_hints(struct crash_facts *facts, int free_fill)
{
    (void)free_fill;
    if (!facts->have_info || facts->code != SI_KERNEL)
        return;
    facts->has_address = 0;
    facts->fault_address = 0;
    facts->free_fill = -1;
    if (facts->signo == SIGSEGV || facts->signo == SIGBUS)
        facts->address_unknown = 1;
}
