/* guard_pool_table.h: the guard pool's state, shared by its allocating
 * half (guard_pool.c, normal world) and its lookups (guard_pool_lookup.c,
 * signal-safe). Internal to the two. */
#ifndef EXECINFO_EX_GUARD_POOL_TABLE_H
#define EXECINFO_EX_GUARD_POOL_TABLE_H

#include "guard_pool.h"

#include <stdatomic.h>

#define POOL_CLASSES 16
#define CLASS_SPAN ((uintptr_t)4 << 30)     /* 4 GiB of address space a class */
#define PAGE 4096u

/* A slot's facts, outside its pages: the block can end against the guard
 * page, and a freed slot's facts stay readable while its pages are not. */
struct guard_slot {
    _Atomic uint32_t state;
    uint32_t next_free;        /* the class's free list: index + 1, 0 ends it */
    uintptr_t user;
    size_t size;
    stack_id alloc_stack, free_stack;
};

struct size_class {
    uint32_t capacity;         /* slots in CLASS_SPAN */
    uint32_t bumped;           /* slots handed out at least once */
    uint32_t free_head;        /* index + 1 */
    struct guard_slot *slots;  /* this class's part of the side table */
};

extern struct guard_pool {
    uintptr_t base;            /* 0: no pool */
    enum guard_side side;
    size_t max;
    size_t budget;             /* guarded slots, live or quarantined */
    size_t in_use;             /* live + quarantined, under the lock */
    struct size_class classes[POOL_CLASSES];
    /* The quarantine: freed slots, oldest first, a ring of BUDGET. */
    uint32_t *ring;            /* slot indices */
    uint32_t *ring_class;      /* and their classes */
    size_t ring_head, ring_count;
    atomic_flag lock;
    int sampling;              /* sample=N: a spent budget is no news */
    _Atomic size_t marked;     /* slots whose guard pages are kept apart */
    size_t mark_budget;        /* at most: vm.max_map_count / 16 */
    _Atomic int said_fallback;
} guard_pool_state;
/* Its short name in the two files. */
#define pool guard_pool_state

static inline size_t slot_pages(int class) { return ((size_t)1 << class) + 1; }

static inline uintptr_t slot_start(int class, uint32_t index)
{
    return pool.base + (uintptr_t)class * CLASS_SPAN + (uintptr_t)index * slot_pages(class) * PAGE;
}

static inline uintptr_t data_start(int class, uint32_t index)
{
    return slot_start(class, index) + (pool.side == GUARD_BEFORE ? PAGE : 0);
}

static inline size_t data_bytes(int class) { return ((size_t)1 << class) * PAGE; }

/* The class and slot index of ADDRESS in the pool: 0 if outside. */
int guard_pool_locate(uintptr_t address, int *class, uint32_t *index);
/* *FACTS from the side table. */
void guard_pool_slot_facts(int class, uint32_t index, struct guard_block *facts);

#endif
