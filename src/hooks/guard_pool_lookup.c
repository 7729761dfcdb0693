/* guard_pool_lookup.c: what the guard pool's side table says about an
 * address (guard_pool.h). World: signal-safe: it only reads the table,
 * which the fatal handler's heap section and free share. */
#include "guard_pool_table.h"

struct guard_pool guard_pool_state = { .lock = ATOMIC_FLAG_INIT };
uintptr_t guard_pool_low = (uintptr_t)0 - GUARD_POOL_SPAN;

/* The class and slot index of ADDRESS in the pool: 0 if outside. */
int guard_pool_locate(uintptr_t address, int *class, uint32_t *index)
{
    if (!guard_pool_contains(address))
        return 0;
    uintptr_t offset = address - pool.base;
    *class = (int)(offset / CLASS_SPAN);
    uint64_t in_class = (offset % CLASS_SPAN) / PAGE / slot_pages(*class);
    if (in_class >= pool.classes[*class].capacity)
        return 0;
    *index = (uint32_t)in_class;
    return 1;
}

void guard_pool_slot_facts(int class, uint32_t index, struct guard_block *facts)
{
    const struct guard_slot *slot = &pool.classes[class].slots[index];
    facts->state = atomic_load_explicit(&slot->state, memory_order_acquire);
    facts->user = slot->user;
    facts->size = slot->size;
    facts->alloc_stack = slot->alloc_stack;
    facts->free_stack = slot->free_stack;
    uintptr_t start = slot_start(class, index);
    facts->guard_low = pool.side == GUARD_BEFORE ? start : start + data_bytes(class);
    facts->guard_high = facts->guard_low + PAGE;
}

int guard_pool_find(uintptr_t address, struct guard_block *facts)
{
    int class;
    uint32_t index;
    if (!guard_pool_locate(address, &class, &index))
        return 0;
    guard_pool_slot_facts(class, index, facts);
    /* A slot evicted from the quarantine keeps its last block's facts
     * (and its pages stay inaccessible) until it is handed out again. */
    return facts->user != 0;
}

size_t guard_pool_size(uintptr_t user)
{
    struct guard_block facts;
    return guard_pool_find(user, &facts) && facts.state == GUARD_SLOT_LIVE && facts.user == user
               ? facts.size : 0;
}

void guard_pool_each_live(void (*fn)(uintptr_t, size_t, stack_id, void *), void *context)
{
    if (pool.base == 0)
        return;
    for (int c = 0; c < POOL_CLASSES; c++) {
        const struct size_class *sc = &pool.classes[c];
        uint32_t bumped = __atomic_load_n(&sc->bumped, __ATOMIC_RELAXED);
        for (uint32_t i = 0; i < bumped; i++) {
            const struct guard_slot *slot = &sc->slots[i];
            if (atomic_load_explicit(&slot->state, memory_order_acquire) == GUARD_SLOT_LIVE)
                fn(slot->user, slot->size, slot->alloc_stack, context);
        }
    }
}
