/* leb128.h: DWARF's variable-length integers, read within bounds.
 * Signal-safe (pure functions). */
#ifndef EXECINFO_EX_LEB128_H
#define EXECINFO_EX_LEB128_H

#include <stdint.h>

/* Read an unsigned LEB128 at *AT (not past END), advancing *AT; sets
 * *FAILED when the number runs past END. */
static inline uint64_t leb128_unsigned(const uint8_t **at, const uint8_t *end, int *failed)
{
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0x80;

    while ((byte & 0x80) && *at < end) {
        byte = *(*at)++;
        if (shift < 64)
            value |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    }
    if (byte & 0x80)
        *failed = 1;
    return value;
}

static inline int64_t leb128_signed(const uint8_t **at, const uint8_t *end, int *failed)
{
    const uint8_t *start = *at;
    uint64_t value = leb128_unsigned(at, end, failed);
    unsigned bits = (unsigned)(*at - start) * 7;

    if (*failed || *at == start)
        return 0;
    if (bits < 64 && ((*at)[-1] & 0x40))
        value |= ~(uint64_t)0 << bits;
    return (int64_t)value;
}

#endif
