/* rule_cache.h: the call-frame rules of recently seen pcs, lock-free. */
#ifndef EXECINFO_EX_RULE_CACHE_H
#define EXECINFO_EX_RULE_CACHE_H

#include <stdatomic.h>
#include <stdint.h>

/* The common frame shape: CFA = rsp or rbp + offset, return address saved
 * at CFA + ra_offset, rbp unchanged or saved at CFA + rbp_offset; or the
 * outermost frame (_start, a thread's start), whose return address is
 * undefined: every walk that reaches the bottom of a stack ends there. */
struct simple_rule {
    uint8_t cfa_register;   /* CFI_SP or CFI_FP */
    uint8_t rbp_saved;      /* 0: rbp unchanged */
    uint8_t outermost;      /* 1: the walk ends here */
    int32_t cfa_offset;
    int32_t ra_offset;
    int32_t rbp_offset;
};

/* The cache itself, here so that the lookup below inlines into the
 * walker's step (the hottest path of a capture). */
#define RULE_CACHE_SLOTS 4096

struct rule_cache_slot {
    atomic_uint sequence;
    atomic_uint generation;
    atomic_uintptr_t pc;
    atomic_uint_least64_t packed;   /* cfa_offset, ra_offset as two int32 */
    atomic_int rbp_offset;
    atomic_uint flags;              /* cfa_register | rbp_saved << 8 | outermost << 9 */
};

extern atomic_uint rule_cache_current_generation;

/* A slot is chosen in two steps: the page of slots by the pc's 4 KiB of
 * code, then the slot in that page by the pc itself. A program whose
 * captures step through a few pages of code touches as many pages of the
 * cache, not all 32 of them (a hash of the pc alone spread pool's few
 * dozen pcs over 30 pages: 120 KiB of resident memory for nothing). */
#define RULE_CACHE_SLOTS_PER_PAGE (4096 / sizeof(struct rule_cache_slot))
#define RULE_CACHE_PAGES (RULE_CACHE_SLOTS / RULE_CACHE_SLOTS_PER_PAGE)
_Static_assert(4096 % sizeof(struct rule_cache_slot) == 0 && RULE_CACHE_PAGES > 0,
               "a page holds whole slots");

/* The slots are the page-aligned run inside rule_cache_memory, aligned at
 * run time rather than by the linker: an object aligned to a page aligns
 * the whole .bss, and .bss's first page then held crtstuff's completed.0
 * alone, a page every process reads and writes at exit (issue 26: two
 * page faults). A slot's size divides a page, so the run starts on one. */
extern struct rule_cache_slot rule_cache_memory[RULE_CACHE_SLOTS + RULE_CACHE_SLOTS_PER_PAGE]
    __attribute__((aligned(sizeof(struct rule_cache_slot))));

static inline struct rule_cache_slot *rule_cache_slots(void)
{
    return (struct rule_cache_slot *)(((uintptr_t)rule_cache_memory + 4095) & ~(uintptr_t)4095);
}

static inline struct rule_cache_slot *rule_cache_slot_for(uintptr_t pc)
{
    uintptr_t code_page = (pc >> 12) * (uintptr_t)0x9e3779b97f4a7c15u;
    uintptr_t hash = pc * (uintptr_t)0x9e3779b97f4a7c15u;
    return &rule_cache_slots()[(code_page >> 40) % RULE_CACHE_PAGES * RULE_CACHE_SLOTS_PER_PAGE +
                             (hash >> 40) % RULE_CACHE_SLOTS_PER_PAGE];
}

/* Returns 1 and the rule if PC is cached. Signal-safe, wait-free. */
static inline int rule_cache_find(uintptr_t pc, struct simple_rule *rule)
{
    struct rule_cache_slot *slot = rule_cache_slot_for(pc);
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
    if (cached_pc != pc ||
        generation != atomic_load_explicit(&rule_cache_current_generation, memory_order_relaxed))
        return 0;
    rule->cfa_register = (uint8_t)(flags & 0xff);
    rule->rbp_saved = (uint8_t)(flags >> 8 & 1);
    rule->outermost = (uint8_t)(flags >> 9 & 1);
    rule->cfa_offset = (int32_t)(uint32_t)packed;
    rule->ra_offset = (int32_t)(uint32_t)(packed >> 32);
    rule->rbp_offset = rbp_offset;
    return 1;
}

/* The current generation: read it before looking a rule up, so that a
 * rule found before an invalidation is not stored as a new one. */
static inline unsigned rule_cache_generation(void)
{
    return atomic_load_explicit(&rule_cache_current_generation, memory_order_acquire);
}

/* Remember the rule for PC, found in GENERATION; gives up rather than wait
 * if the slot is being written (by another thread or by the code this
 * handler interrupted). Signal-safe, wait-free. */
void rule_cache_store(uintptr_t pc, const struct simple_rule *rule, unsigned generation);

/* Forget everything (modules were unloaded: a pc may mean other code). */
void rule_cache_invalidate(void);

#endif
