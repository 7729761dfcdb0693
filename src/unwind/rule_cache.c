/* rule_cache.c: a direct-mapped cache of frame rules, one seqlock a slot.
 * World: signal-safe (atomics only; nobody ever waits).
 *
 * A writer claims a slot by moving its sequence from even to odd with a
 * compare-and-swap, writes, and makes it even again; a reader copies the
 * slot and keeps the copy only if the sequence was even and unchanged.
 * A generation number, bumped when modules are unloaded, retires every
 * slot at once. */
#include "rule_cache.h"

/* rule_cache.h has the slots and the lookup (inline in the walker). */
struct rule_cache_slot rule_cache_memory[RULE_CACHE_SLOTS + RULE_CACHE_SLOTS_PER_PAGE]
    __attribute__((aligned(sizeof(struct rule_cache_slot))));
atomic_uint rule_cache_current_generation = 1;

void rule_cache_store(uintptr_t pc, const struct simple_rule *rule, unsigned generation)
{
    struct rule_cache_slot *slot = rule_cache_slot_for(pc);
    unsigned before = atomic_load_explicit(&slot->sequence, memory_order_relaxed);
    if ((before & 1u) ||
        !atomic_compare_exchange_strong_explicit(&slot->sequence, &before, before + 1,
                                                 memory_order_acquire, memory_order_relaxed))
        return;
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&slot->pc, pc, memory_order_relaxed);
    atomic_store_explicit(&slot->generation, generation, memory_order_relaxed);
    atomic_store_explicit(&slot->packed,
                          (uint64_t)(uint32_t)rule->cfa_offset |
                              (uint64_t)(uint32_t)rule->ra_offset << 32,
                          memory_order_relaxed);
    atomic_store_explicit(&slot->rbp_offset, rule->rbp_offset, memory_order_relaxed);
    atomic_store_explicit(&slot->flags, rule->cfa_register | (unsigned)rule->rbp_saved << 8 |
                              (unsigned)rule->outermost << 9,
                          memory_order_relaxed);
    atomic_store_explicit(&slot->sequence, before + 2, memory_order_release);
}

void rule_cache_invalidate(void)
{
    atomic_fetch_add(&rule_cache_current_generation, 1);
}
