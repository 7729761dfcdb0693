/* block_scan_aarch64.h: block_scan_wide with NEON (block_scan.h). A
 * chunk holds when the largest byte of its XOR with the pattern is 0. */
#ifndef EXECINFO_EX_BLOCK_SCAN_AARCH64_H
#define EXECINFO_EX_BLOCK_SCAN_AARCH64_H

#include <arm_neon.h>

static inline size_t block_scan_wide(const unsigned char *bytes, size_t count, unsigned char byte)
{
    size_t i = 0;
    const uint8x16_t want = vdupq_n_u8(byte);
    for (; i + 64 <= count; i += 64) {
        uint8x16_t x = vorrq_u8(vorrq_u8(veorq_u8(vld1q_u8(bytes + i), want),
                                         veorq_u8(vld1q_u8(bytes + i + 16), want)),
                                vorrq_u8(veorq_u8(vld1q_u8(bytes + i + 32), want),
                                         veorq_u8(vld1q_u8(bytes + i + 48), want)));
        if (vmaxvq_u8(x) != 0)
            return i;
    }
    for (; i + 16 <= count; i += 16)
        if (vmaxvq_u8(veorq_u8(vld1q_u8(bytes + i), want)) != 0)
            return i;
    if (i < count) {
        i = count - 16; /* the last 16, overlapping what was checked */
        if (vmaxvq_u8(veorq_u8(vld1q_u8(bytes + i), want)) != 0)
            return i;
    }
    return BLOCK_SCAN_HOLDS;
}

#endif
