/* leak_arch.h: what the leak check's roots depend on the architecture
 * for, one file per architecture (leak_arch_x86_64.c).
 * World: signal-safe (pure). */
#ifndef EXECINFO_EX_LEAK_ARCH_H
#define EXECINFO_EX_LEAK_ARCH_H

#include <stddef.h>
#include <stdint.h>

/* Bytes below the stack pointer a leaf function may still use. */
size_t leak_arch_red_zone(void);

/* Where a thread's static TLS (STATIC_SIZE bytes, as the loader says,
 * its thread control block included) lies around its THREAD_POINTER:
 * [*LOW, *HIGH), with the start of the control block (which points at
 * the thread's dynamic TLS vector). */
void leak_arch_static_tls(uintptr_t thread_pointer, size_t static_size, uintptr_t *low,
                          uintptr_t *high);

#endif
