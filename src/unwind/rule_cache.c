/* rule_cache.c: a direct-mapped cache of frame rules, one seqlock a slot.
 * World: signal-safe (atomics only; nobody ever waits).
 *
 * A writer claims a slot by moving its sequence from even to odd with a
 * compare-and-swap, writes, and makes it even again; a reader copies the
 * slot and keeps the copy only if the sequence was even and unchanged.
 * A generation number, bumped when modules are unloaded, retires every
 * slot at once. */
#include "rule_cache.h"

#include <stdatomic.h>

#define SLOT_COUNT 4096

struct slot {
    atomic_uint sequence;
    atomic_uint generation;
    atomic_uintptr_t pc;
    atomic_uint_least64_t packed;   /* cfa_offset, ra_offset as two int32 */
    atomic_int rbp_offset;
    atomic_uint flags;              /* cfa_register | rbp_saved << 8 | outermost << 9 */
};

static struct slot slots[SLOT_COUNT];
static atomic_uint current_generation = 1;

static struct slot *slot_for(uintptr_t pc)
{
    uintptr_t hash = pc * (uintptr_t)0x9e3779b97f4a7c15u;
    return &slots[(hash >> 40) % SLOT_COUNT];
}

int rule_cache_find(uintptr_t pc, struct simple_rule *rule)
{
    struct slot *slot = slot_for(pc);
    unsigned before = atomic_load_explicit(&slot->sequence, memory_order_acquire);
    if (before & 1u)
        return 0;
    uintptr_t cached_pc = atomic_load_explicit(&slot->pc, memory_order_relaxed);
    unsigned generation = atomic_load_explicit(&slot->generation, memory_order_relaxed);
    uint64_t packed = atomic_load_explicit(&slot->packed, memory_order_relaxed);
    int rbp_offset = atomic_load_explicit(&slot->rbp_offset, memory_order_relaxed);
    unsigned flags = atomic_load_explicit(&slot->flags, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&slot->sequence, memory_order_relaxed) != before)
        return 0;
    if (cached_pc != pc || generation != atomic_load_explicit(&current_generation, memory_order_relaxed))
        return 0;
    rule->cfa_register = (uint8_t)(flags & 0xff);
    rule->rbp_saved = (uint8_t)(flags >> 8 & 1);
    rule->outermost = (uint8_t)(flags >> 9 & 1);
    rule->cfa_offset = (int32_t)(uint32_t)packed;
    rule->ra_offset = (int32_t)(uint32_t)(packed >> 32);
    rule->rbp_offset = rbp_offset;
    return 1;
}

unsigned rule_cache_generation(void)
{
    return atomic_load_explicit(&current_generation, memory_order_acquire);
}

void rule_cache_store(uintptr_t pc, const struct simple_rule *rule, unsigned generation)
{
    struct slot *slot = slot_for(pc);
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
    atomic_fetch_add(&current_generation, 1);
}
