/* block_set.h: the set of every block the hook layer handed out and has not
 * given back to the C library (live and quarantined).
 *
 * It answers "is this pointer ours?" exactly at every free and realloc, so
 * a block allocated before the hooks took over is passed through to glibc
 * and never misread as ours; and it lets the checks and the crash handler
 * visit every block. */
#ifndef EXECINFO_EX_BLOCK_SET_H
#define EXECINFO_EX_BLOCK_SET_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0, or -ENOMEM when the set could not grow (the block is then not
 * recorded). World: normal (a shard mutex, mmap when growing). */
int block_set_insert(uintptr_t block);

/* Returns 1 if BLOCK was in the set (and is now removed), else 0.
 * World: normal (a shard mutex). */
int block_set_remove(uintptr_t block);

/* World: normal (a shard mutex). */
int block_set_contains(uintptr_t block);

/* Call VISIT(block, context) for each block, shard by shard, with no lock:
 * a block added or removed meanwhile may be missed or seen; a visitor must
 * validate what it reads. Stops early when VISIT returns nonzero, and
 * returns that value. World: signal-safe. */
int block_set_each(int (*visit)(uintptr_t block, void *context), void *context);

/* Blocks in the set (a sum of per-shard counts read without locks). */
size_t block_set_count(void);

/* fork: take every shard lock before, release them after in both
 * processes, so that the child's set is consistent. */
void block_set_lock_all(void);
void block_set_unlock_all(void);

#endif
