/* guard_pool.c: guarded slots in one reserved range (guard_pool.h says
 * the layout). World: normal for allocate and release; the lookups are
 * signal-safe. */
#define _GNU_SOURCE
#include "guard_pool.h"
#include "guard_pool_table.h"
#include "../base/spin_pause.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&pool.lock, memory_order_acquire))
        spin_pause();
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&pool.lock, memory_order_release);
}

void guard_pool_lock(void) { lock(); }
void guard_pool_unlock(void) { unlock(); }

static void say(const char *text)
{
    ssize_t ignored = write(2, text, strlen(text));
    (void)ignored;
}

/* Once per process: a block that wanted a guard page got the ordinary
 * guards instead. */
static void say_fallback(const char *why)
{
    if (atomic_exchange(&pool.said_fallback, 1) != 0)
        return;
    say("execinfo_ex: guard_pages: ");
    say(why);
    say("; blocks beyond it get the ordinary guards (said once)\n");
}

static size_t read_max_map_count(void)
{
    char text[32];
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 65530;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    size_t value = 0;
    for (ssize_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; i++)
        value = value * 10 + (size_t)(text[i] - '0');
    return value != 0 ? value : 65530;
}

int guard_pool_init(enum guard_side side, size_t max, size_t budget, int sampling)
{
    _Static_assert(CLASS_SPAN * POOL_CLASSES == GUARD_POOL_SPAN, "the pool's span");
    size_t span = GUARD_POOL_SPAN;
    void *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        say("execinfo_ex: guard_pages: cannot reserve the pool's address space; no block "
            "is guarded\n");
        return -1;
    }
    size_t total = 0;
    for (int c = 0; c < POOL_CLASSES; c++) {
        pool.classes[c].capacity = (uint32_t)(CLASS_SPAN / PAGE / slot_pages(c));
        total += pool.classes[c].capacity;
    }
    if (budget == 0)
        budget = read_max_map_count() / 8;
    size_t table = total * sizeof(struct guard_slot) + 2 * budget * sizeof(uint32_t);
    void *memory = mmap(NULL, table, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) {
        munmap(base, span);
        say("execinfo_ex: guard_pages: no memory for the pool's table; no block is guarded\n");
        return -1;
    }
    struct guard_slot *slots = memory;
    for (int c = 0; c < POOL_CLASSES; c++) {
        pool.classes[c].slots = slots;
        slots += pool.classes[c].capacity;
    }
    pool.ring = (uint32_t *)slots;
    pool.ring_class = pool.ring + budget;
    pool.side = side;
    pool.max = max;
    pool.budget = budget;
    pool.sampling = sampling;
    pool.mark_budget = read_max_map_count() / 16;
    __atomic_store_n(&pool.base, (uintptr_t)base, __ATOMIC_RELEASE);
    __atomic_store_n(&guard_pool_low, (uintptr_t)base, __ATOMIC_RELEASE);
    return 0;
}

static int class_of(size_t size)
{
    size_t pages = size == 0 ? 1 : (size + PAGE - 1) / PAGE;
    int class = 0;
    while (((size_t)1 << class) < pages)
        class++;
    return class;
}

/* Under the lock: the oldest quarantined slot back to its class's free
 * list (its pages stay inaccessible until it is handed out again). */
static void evict_oldest(void)
{
    uint32_t index = pool.ring[pool.ring_head];
    int class = (int)pool.ring_class[pool.ring_head];
    pool.ring_head = (pool.ring_head + 1) % pool.budget;
    pool.ring_count--;
    struct size_class *sc = &pool.classes[class];
    atomic_store_explicit(&sc->slots[index].state, GUARD_SLOT_UNUSED, memory_order_release);
    sc->slots[index].next_free = sc->free_head;
    sc->free_head = index + 1;
    pool.in_use--;
}

/* A slot of CLASS, or UINT32_MAX: the budget is spent even after the
 * quarantine gave back what it holds, or the class is full. */
static uint32_t take_slot(int class, int *fresh)
{
    struct size_class *sc = &pool.classes[class];
    lock();
    /* The quarantine yields first: it is bounded by the same budget. */
    while (pool.in_use >= pool.budget && pool.ring_count > 0)
        evict_oldest();
    uint32_t index = UINT32_MAX;
    if (pool.in_use < pool.budget) {
        if (sc->free_head != 0) {
            index = sc->free_head - 1;
            sc->free_head = sc->slots[index].next_free;
        } else if (sc->bumped < sc->capacity) {
            index = sc->bumped++;
            *fresh = 1;
        }
        if (index != UINT32_MAX)
            pool.in_use++;
    }
    unlock();
    return index;
}

/* sample=N: a slot's data pages a mapping of their own for good. Its two
 * neighbouring guard pages are marked MADV_DONTDUMP (they hold nothing
 * to dump), so the kernel never merges the data pages with them when they
 * become inaccessible, nor splits them off again when they become
 * accessible: each mprotect then changes one mapping's pages and nothing
 * else, 0.5-0.9 us instead of 1.4-1.6 us a call on the bench machine
 * (docs/PERFORMANCE.md). Two mappings a slot at most, so it is done for
 * at most mark_budget slots (each adds up to four mappings); past it a slot is split and merged as
 * guard_pages=1's are. A failure costs only that speed. */
static void keep_apart(int class, uint32_t index)
{
    if (atomic_fetch_add(&pool.marked, 1) >= pool.mark_budget)
        return;
    uintptr_t low = data_start(class, index) - PAGE;
    uintptr_t high = data_start(class, index) + data_bytes(class);
    uintptr_t end = pool.base + GUARD_POOL_SPAN;
    if (low >= pool.base)
        madvise((void *)low, PAGE, MADV_DONTDUMP);
    if (high < end)
        madvise((void *)high, PAGE, MADV_DONTDUMP);
}

int guard_pool_has_room(void)
{
    return __atomic_load_n(&pool.in_use, __ATOMIC_RELAXED) < pool.budget ||
           __atomic_load_n(&pool.ring_count, __ATOMIC_RELAXED) > 0;
}

static void give_back(int class, uint32_t index)
{
    struct size_class *sc = &pool.classes[class];
    lock();
    sc->slots[index].next_free = sc->free_head;
    sc->free_head = index + 1;
    pool.in_use--;
    unlock();
}

void *guard_pool_allocate(size_t size, size_t alignment, stack_id alloc_stack)
{
    if (pool.base == 0 || size > pool.max || alignment > PAGE)
        return NULL;
    int class = class_of(size), fresh = 0;
    uint32_t index = take_slot(class, &fresh);
    if (index == UINT32_MAX) {
        if (!pool.sampling)
            say_fallback("the budget of guarded blocks (guard_pages_budget) is spent");
        return NULL;
    }
    if (fresh && pool.sampling)
        keep_apart(class, index);
    uintptr_t data = data_start(class, index);
    if (mprotect((void *)data, data_bytes(class), PROT_READ | PROT_WRITE) != 0) {
        give_back(class, index);
        say_fallback("mprotect failed (vm.max_map_count?)");
        return NULL;
    }
    /* After: the block's end within ALIGNMENT - 1 bytes of the guard. */
    size_t rounded = (size + alignment - 1) & ~(alignment - 1);
    uintptr_t user = pool.side == GUARD_BEFORE ? data : data + data_bytes(class) - rounded;
    struct guard_slot *slot = &pool.classes[class].slots[index];
    slot->user = user;
    slot->size = size;
    slot->alloc_stack = alloc_stack;
    slot->free_stack = 0;
    atomic_store_explicit(&slot->state, GUARD_SLOT_LIVE, memory_order_release);
    return (void *)user;
}


/* Inaccessible while quarantined: a read after free faults. A one-page
 * slot keeps its page (the next block in it takes no page fault); a
 * larger one gives its pages back in the same call (a fresh PROT_NONE
 * mapping over them), so that a quarantined large block costs no memory.
 * Either way one system call and one TLB flush: with the allocation's
 * mprotect, most of what a sample costs (docs/PERFORMANCE.md). If it
 * fails the pages stay readable; the slot is still quarantined. */
static void make_inaccessible(int class, uint32_t index)
{
    void *data = (void *)data_start(class, index);
    if (class == 0)
        mprotect(data, data_bytes(class), PROT_NONE);
    else
        mmap(data, data_bytes(class), PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

int guard_pool_release(uintptr_t user, stack_id free_stack, struct guard_block *facts)
{
    int class;
    uint32_t index;
    if (!guard_pool_locate(user, &class, &index))
        return -1;
    guard_pool_slot_facts(class, index, facts);
    struct guard_slot *slot = &pool.classes[class].slots[index];
    uint32_t live = GUARD_SLOT_LIVE;
    if (slot->user != user ||
        !atomic_compare_exchange_strong(&slot->state, &live, GUARD_SLOT_FREED))
        return -1;
    slot->free_stack = free_stack;
    facts->free_stack = free_stack;
    make_inaccessible(class, index);
    lock();
    if (pool.ring_count == pool.budget)
        evict_oldest();
    size_t tail = (pool.ring_head + pool.ring_count) % pool.budget;
    pool.ring[tail] = index;
    pool.ring_class[tail] = (uint32_t)class;
    pool.ring_count++;
    unlock();
    return 0;
}

