/* spin_pause.h: the CPU's hint for one turn of a spin-wait loop, the one
 * instruction a spin lock needs per architecture (pause on x86-64, yield
 * on aarch64), as crash_registers.h keeps its two constants. */
#ifndef EXECINFO_EX_SPIN_PAUSE_H
#define EXECINFO_EX_SPIN_PAUSE_H

static inline void spin_pause(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#else
#error "src/base: x86_64 and aarch64 only; add the spin-wait hint"
#endif
}

#endif
