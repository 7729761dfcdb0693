/* leak_arch_aarch64.c: the leak check's roots on aarch64 (leak_arch.h).
 * World: signal-safe (pure).
 *
 * aarch64 lays TLS out as the ELF TLS "variant I": the thread pointer
 * (tpidr_el0) points at a 16-byte control block (dtv pointer, one private
 * word), and the static TLS blocks follow it, above; glibc's struct
 * pthread lies below. The loader's static size counts the blocks and the
 * control block, so [tp, tp + size) holds them all. */
#include "leak_arch.h"

/* AAPCS64 has no red zone: nothing below sp is the function's. */
size_t leak_arch_red_zone(void)
{
    return 0;
}

void leak_arch_static_tls(uintptr_t thread_pointer, size_t static_size, uintptr_t *low,
                          uintptr_t *high)
{
    *low = thread_pointer;
    *high = thread_pointer + static_size;
}
