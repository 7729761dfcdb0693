/* guard_pool.h: blocks that end (or start) against an inaccessible page,
 * in one reserved range of address space (guard_pages=1|after|before).
 *
 * The pool reserves 64 GiB PROT_NONE once: 16 size classes of 4 GiB, class
 * C holding slots of 2^C data pages and one guard page. A slot's data
 * pages are made accessible while its block lives and inaccessible again
 * while it waits, freed, in the pool's quarantine; the guard page never
 * is. Guarded slots therefore never split a mapping of anyone else's.
 * The headers live in a side table, so that the block's last byte can sit
 * within 15 bytes of the guard page (malloc's 16-byte alignment).
 *
 * World: allocate and release are normal world (mprotect, a spin lock
 * held for a few instructions); guard_pool_contains and guard_pool_find
 * are signal-safe (they read the side table). */
#ifndef EXECINFO_EX_GUARD_POOL_H
#define EXECINFO_EX_GUARD_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

enum guard_side { GUARD_AFTER = 1, GUARD_BEFORE = 2 };
enum guard_slot_state { GUARD_SLOT_UNUSED = 0, GUARD_SLOT_LIVE = 1, GUARD_SLOT_FREED = 2 };

/* Reserve the pool. SIDE: where the guard page goes; MAX: the largest
 * block guarded; BUDGET: guarded slots (live or quarantined) at most, 0
 * for vm.max_map_count / 8. Returns 0, or -1 (then nothing is guarded,
 * and the library has said so on stderr). Normal world, at initialisation. */
int guard_pool_init(enum guard_side side, size_t max, size_t budget);

/* A guarded block of SIZE bytes at ALIGNMENT (a power of two), its stack
 * recorded, or NULL when it cannot be guarded (too large, the budget
 * spent, mprotect failed: said once on stderr): the caller then falls
 * back to an ordinary block. Never fails an allocation itself. */
void *guard_pool_allocate(size_t size, size_t alignment, stack_id alloc_stack);

/* The reservation starts at guard_pool_low and spans GUARD_POOL_SPAN.
 * Before there is one, guard_pool_low names the top of the address space,
 * where no user pointer lies: one load and one compare, no race with the
 * pool's creation. Inline: free checks every pointer (sample mode's fast
 * path). */
#define GUARD_POOL_SPAN ((uintptr_t)64 << 30)
extern uintptr_t guard_pool_low;

/* 1 when ADDRESS is in the pool's reservation. Signal-safe. */
static inline int guard_pool_contains(uintptr_t address)
{
    return address - __atomic_load_n(&guard_pool_low, __ATOMIC_ACQUIRE) < GUARD_POOL_SPAN;
}

/* Free the block at USER (guard_pool_contains holds): its pages made
 * inaccessible, quarantined. Returns 0; -1 when USER is no live block's
 * start (a double or invalid free: *FACTS says what the slot holds). */
struct guard_block {
    uintptr_t user;
    size_t size;
    enum guard_slot_state state;
    stack_id alloc_stack, free_stack;
    uintptr_t guard_low, guard_high;  /* the slot's guard page */
};
int guard_pool_release(uintptr_t user, stack_id free_stack, struct guard_block *facts);

/* The slot that holds ADDRESS (its data or guard page): 1 and *FACTS, or
 * 0 when ADDRESS is outside the pool or in a slot never used.
 * Signal-safe. */
int guard_pool_find(uintptr_t address, struct guard_block *facts);

/* Size of a live guarded block (malloc_usable_size), 0 if not live. */
size_t guard_pool_size(uintptr_t user);

/* The pool's lock, around fork (pthread_atfork): normal world. */
void guard_pool_lock(void);
void guard_pool_unlock(void);

/* Live guarded blocks: FN(user, size, alloc_stack, context) for each
 * (the exit check and the leak check's view). Signal-safe. */
void guard_pool_each_live(void (*fn)(uintptr_t, size_t, stack_id, void *), void *context);

#endif
