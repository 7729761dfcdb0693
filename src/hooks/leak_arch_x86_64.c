/* leak_arch_x86_64.c: the leak check's roots on x86-64 (leak_arch.h).
 * World: signal-safe (pure).
 *
 * x86-64 lays TLS out as the ELF TLS "variant II": the static TLS blocks
 * sit below the thread pointer, the thread control block (glibc's struct
 * pthread, whose header holds the dtv pointer) at and above it. The
 * loader's static size counts the control block, so [tp - size, tp)
 * holds every static block and then some of what lies below: scanned
 * too, a conservative over-reach of one control block's size. */
#include "leak_arch.h"

/* The System V ABI's red zone. */
size_t leak_arch_red_zone(void)
{
    return 128;
}

/* tcbhead_t's first words: tcb, dtv, self. */
#define CONTROL_BLOCK_HEAD 24

void leak_arch_static_tls(uintptr_t thread_pointer, size_t static_size, uintptr_t *low,
                          uintptr_t *high)
{
    *low = thread_pointer > static_size ? thread_pointer - static_size : 0;
    *high = thread_pointer + CONTROL_BLOCK_HEAD;
}
