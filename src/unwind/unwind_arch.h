/* unwind_arch.h: the walker's registers on this architecture, one header
 * per architecture beside the generic code. The one place the unwinder
 * asks which architecture it is compiled for. */
#ifndef EXECINFO_EX_UNWIND_ARCH_H
#define EXECINFO_EX_UNWIND_ARCH_H

#if defined(__x86_64__)
#include "unwind_arch_x86_64.h"
#elif defined(__aarch64__)
#include "unwind_arch_aarch64.h"
#else
#error "src/unwind: x86_64 and aarch64 only; add unwind_arch_ARCH.h and stack_walk_ARCH.c"
#endif

#endif
