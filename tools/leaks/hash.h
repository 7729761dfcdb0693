/* hash.h: the hash of a byte string for the tool's tables (FNV-1a, 64 bits:
 * short keys, no adversary to defend against beyond a slow report). */
#ifndef EXECINFO_EX_LEAKS_HASH_H
#define EXECINFO_EX_LEAKS_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_bytes(const void *data, size_t length)
{
    const unsigned char *bytes = data;
    uint64_t hash = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

/* Spread a 64-bit value over all bits (the finalizer of MurmurHash3). */
static inline uint64_t hash_mix(uint64_t value)
{
    value ^= value >> 33;
    value *= 0xff51afd7ed558ccdull;
    value ^= value >> 33;
    value *= 0xc4ceb9fe1a85ec53ull;
    value ^= value >> 33;
    return value;
}

#endif
