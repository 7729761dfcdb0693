/* block_scan_x86_64.h: block_scan_wide with SSE2 (block_scan.h). */
#ifndef EXECINFO_EX_BLOCK_SCAN_X86_64_H
#define EXECINFO_EX_BLOCK_SCAN_X86_64_H

#include <emmintrin.h>

static inline size_t block_scan_wide(const unsigned char *bytes, size_t count, unsigned char byte)
{
    size_t i = 0;
    const __m128i want = _mm_set1_epi8((char)byte);
    for (; i + 64 <= count; i += 64) {
        const __m128i *p = (const __m128i *)(bytes + i);
        __m128i x = _mm_or_si128(
            _mm_or_si128(_mm_xor_si128(_mm_loadu_si128(p), want),
                         _mm_xor_si128(_mm_loadu_si128(p + 1), want)),
            _mm_or_si128(_mm_xor_si128(_mm_loadu_si128(p + 2), want),
                         _mm_xor_si128(_mm_loadu_si128(p + 3), want)));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) != 0xffff)
            return i;
    }
    for (; i + 16 <= count; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(bytes + i));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, want)) != 0xffff)
            return i;
    }
    if (i < count) {
        i = count - 16; /* the last 16, overlapping what was checked */
        __m128i x = _mm_loadu_si128((const __m128i *)(bytes + i));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, want)) != 0xffff)
            return i;
    }
    return BLOCK_SCAN_HOLDS;
}

#endif
