/* maps_fallback.h: name an address that the index does not hold. */
#ifndef EXECINFO_EX_MAPS_FALLBACK_H
#define EXECINFO_EX_MAPS_FALLBACK_H

#include <stddef.h>
#include <stdint.h>

/* Find ADDRESS in /proc/self/maps. If a file is mapped there, copy its path
 * into PATH (truncated to CAPACITY) and its load bias into *BIAS, return 0;
 * otherwise (anonymous memory, [stack], [vsyscall], unmapped) -ENOENT.
 * Signal-safe (open, read, close; no malloc). */
int maps_fallback_find(uintptr_t address, char *path, size_t capacity, uintptr_t *bias);

#endif
