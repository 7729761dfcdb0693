/* block_scan.h: whether 16 or more bytes all hold one byte, 64 at a time
 * with the architecture's 128-bit vectors (block_scan_x86_64.h: SSE2,
 * block_scan_aarch64.h: NEON, both their baseline), unaligned loads, the
 * tail as one overlapping load. Header-only: the scan is inlined into
 * block.c's fill and guard checks, the hook layer's byte work.
 * World: signal-safe (reads only [BYTES, BYTES + COUNT), calls nothing). */
#ifndef EXECINFO_EX_BLOCK_SCAN_H
#define EXECINFO_EX_BLOCK_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define BLOCK_SCAN_HOLDS SIZE_MAX

/* static inline size_t block_scan_wide(const unsigned char *bytes,
 *                                      size_t count, unsigned char byte):
 * COUNT >= 16. BLOCK_SCAN_HOLDS if every byte is BYTE, else an offset I
 * such that the bytes before I hold and the first that does not is in
 * [I, I + 64). */
#if defined(__x86_64__)
#include "block_scan_x86_64.h"
#elif defined(__aarch64__)
#include "block_scan_aarch64.h"
#else
#error "src/hooks: x86_64 and aarch64 only; add block_scan_ARCH.h"
#endif

#endif
