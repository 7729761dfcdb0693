/* block_set.h: the set of every block the hook layer handed out and has not
 * given back to the C library (live and quarantined).
 *
 * It answers "is this pointer ours?" exactly at every free and realloc, so
 * a block allocated before the hooks took over is passed through to glibc
 * and never misread as ours; and it lets the checks and the crash handler
 * visit every block. Every operation is lock-free and signal-safe, so
 * fork needs no preparation and the crash handler reads it as it is. */
#ifndef EXECINFO_EX_BLOCK_SET_H
#define EXECINFO_EX_BLOCK_SET_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0; -ENOMEM when the bitmap of a new region could not be
 * mapped, -EINVAL for an address that is not 16-byte aligned or beyond the
 * 47-bit user space (the block is then not recorded). World: signal-safe
 * (an atomic OR; mmap the first time in a region). */
int block_set_insert(uintptr_t block);

/* Returns 1 if BLOCK was in the set (and is now removed), else 0. */
int block_set_remove(uintptr_t block);

int block_set_contains(uintptr_t block);

/* Call VISIT(block, context) for each block in [LOW, HIGH), in address
 * order, with no lock: a block added or removed meanwhile may be missed or
 * seen; a visitor must validate what it reads. Stops early when VISIT
 * returns nonzero, and returns that value. */
int block_set_each_in(uintptr_t low, uintptr_t high,
                      int (*visit)(uintptr_t block, void *context), void *context);
int block_set_each(int (*visit)(uintptr_t block, void *context), void *context);

/* The highest block at or below ADDRESS, or 0: the only one that can
 * contain ADDRESS, since blocks do not overlap. */
uintptr_t block_set_last_at_or_before(uintptr_t address);

/* Blocks in the set (counted by a walk: for tests and statistics). */
size_t block_set_count(void);

#endif
