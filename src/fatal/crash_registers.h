/* crash_registers.h: the registers a crash report shows, one file per
 * architecture beside collect.c (crash_registers_x86_64.c,
 * crash_registers_aarch64.c), picked by ARCH. The counts are the one thing
 * the generic code must know at compile time (an array size, the fault
 * hints' loop).
 * World: signal-safe (pure). */
#ifndef EXECINFO_EX_CRASH_REGISTERS_H
#define EXECINFO_EX_CRASH_REGISTERS_H

#if defined(__x86_64__)
#define CRASH_REGISTERS 18   /* rax..r15, rip, eflags */
#define CRASH_GENERAL_REGISTERS 16 /* rax..r15: the first entries */
#elif defined(__aarch64__)
#define CRASH_REGISTERS 34   /* x0..x30, sp, pc, pstate */
#define CRASH_GENERAL_REGISTERS 32 /* x0..x30, sp: the first entries */
#else
#error "src/fatal: x86_64 and aarch64 only; add crash_registers_ARCH.c"
#endif

#endif
