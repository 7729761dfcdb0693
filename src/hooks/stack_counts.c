/* stack_counts.c: allocations and bytes per depot stack, in all, live and
 * at the peak.
 * World: signal-safe (atomics and memory; mmap at initialisation only).
 *
 * Each count is one atomic add: allocations add to the allocated side,
 * frees to the freed side (any thread may free a block), so that a
 * profile read at any moment finds every count consistent on its own.
 * A stack is listed the first time an allocation is counted on it (the
 * add that found zero lists it): a profile walks the listed stacks, not
 * the depot, which also holds free and report stacks. A stack with a
 * frame in the library's own code (the core library builds its symbol
 * index from its constructor, before the hook layer can say it is busy)
 * is looked at once, at its first allocation, and never counted: a
 * profile shows the program's memory. A stack as deep as a capture goes,
 * outside the program's own code, may have lost that frame: its first
 * allocation walks deeper (stack_counts_look_deeper).
 *
 * The peak: the live bytes of the whole heap are a sum every thread would
 * write, one contended line; instead each thread keeps its own change and
 * hands it on to the shared total once it reaches 32 KiB either way. When
 * the total passes the last snapshot by more than 1%, one thread (a
 * try-lock; the others go on) copies every listed stack's in-use counts
 * into its peak counts: about 1,000 snapshots from 32 KiB to 1 GiB, none
 * once the heap stops growing, and the peak counts are within 1% (and the
 * threads' unflushed shares) of those at the true peak. */
#include "stack_counts.h"
#include "../base/load_touched.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

static _Atomic stack_id *listed;        /* the counted stacks, in order */
static size_t list_capacity;
static _Alignas(64) _Atomic size_t list_used;

#define EXCLUDED_MAX 2
static LOAD_TOUCHED uintptr_t excluded[EXCLUDED_MAX][2];
static LOAD_TOUCHED int excluded_count;
static int cut_depth = STACK_DEPOT_MAX_FRAMES;
static uintptr_t program_code[2];
static int (*look_deeper)(void);

static _Alignas(64) _Atomic int64_t live_total;   /* what the threads handed on */
static _Atomic uint64_t snapshot_total;           /* live_total at the last snapshot */
static _Atomic int snapshotting;

/* Not handed on yet. A free in a signal handler that interrupts this
 * thread's own update may be lost from it: the total only decides when
 * to take a snapshot, and the counts themselves are exact. */
static __thread int64_t unflushed __attribute__((tls_model("initial-exec")));

int stack_counts_init(size_t capacity)
{
    if (listed != NULL)
        return 0;
    void *map = mmap(NULL, capacity * sizeof(stack_id), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return -errno;
    list_capacity = capacity;
    atomic_store_explicit(&listed, map, memory_order_release);
    return 0;
}

void stack_counts_exclude(uintptr_t start, uintptr_t end)
{
    if (excluded_count < EXCLUDED_MAX && start < end) {
        excluded[excluded_count][0] = start;
        excluded[excluded_count][1] = end;
        excluded_count++;
    }
}

void stack_counts_look_deeper(int depth, uintptr_t program_start, uintptr_t program_end,
                              int (*deeper)(void))
{
    cut_depth = depth;
    program_code[0] = program_start;
    program_code[1] = program_end;
    look_deeper = deeper;
}

int stack_counts_in_excluded(void *const *frames, int count)
{
    for (int i = 0; i < count; i++)
        for (int r = 0; r < excluded_count; r++)
            if ((uintptr_t)frames[i] >= excluded[r][0] && (uintptr_t)frames[i] < excluded[r][1])
                return 1;
    return 0;
}

/* Cut where a capture stops, and none of it the program's own code: the
 * library's frame may be further out. A frame of the program says the
 * program made the call (the library calls no program code while it
 * allocates), so its stacks, cut or not, cost no deeper walk. */
static int may_hide_the_library(void *const *frames, int count)
{
    if (count < cut_depth || look_deeper == NULL)
        return 0;
    for (int i = 0; i < count; i++)
        if ((uintptr_t)frames[i] >= program_code[0] && (uintptr_t)frames[i] < program_code[1])
            return 0;
    return 1;
}

static int in_library(stack_id stack)
{
    void *words[STACK_DEPOT_MAX_FRAMES];
    int count = stack_depot_get(stack, words, STACK_DEPOT_MAX_FRAMES);
    if (count <= 1)
        return 0;
    if (stack_counts_in_excluded(words + 1, count - 1)) /* words[0]: the thread */
        return 1;
    return may_hide_the_library(words + 1, count - 1) && look_deeper();
}

/* Full: the stack keeps its counts but no profile shows it. */
static void list_stack(stack_id stack)
{
    _Atomic stack_id *list = atomic_load_explicit(&listed, memory_order_acquire);
    if (list == NULL)
        return;
    size_t slot = atomic_fetch_add_explicit(&list_used, 1, memory_order_relaxed);
    if (slot >= list_capacity) {
        atomic_fetch_sub_explicit(&list_used, 1, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&list[slot], stack, memory_order_release);
}

size_t stack_counts_listed(void)
{
    size_t used = atomic_load_explicit(&list_used, memory_order_acquire);
    return used < list_capacity ? used : list_capacity;
}

stack_id stack_counts_stack(size_t i)
{
    _Atomic stack_id *list = atomic_load_explicit(&listed, memory_order_acquire);
    if (list == NULL || i >= stack_counts_listed())
        return 0;
    return atomic_load_explicit(&list[i], memory_order_acquire);
}

static uint64_t load(_Atomic uint64_t *count)
{
    return atomic_load_explicit(count, memory_order_relaxed);
}

/* For the freed side, read before the allocated side. */
static uint64_t load_first(_Atomic uint64_t *count)
{
    return atomic_load_explicit(count, memory_order_acquire);
}

static void take_snapshot(void)
{
    size_t stacks = stack_counts_listed();
    for (size_t i = 0; i < stacks; i++) {
        stack_id stack = stack_counts_stack(i);
        if (stack == 0)
            continue;
        struct stack_counts *c = stack_depot_counts(stack);
        /* Freed read first: a block freed after it was read is still in use. */
        uint64_t freed_objects = load_first(&c->freed_objects);
        uint64_t freed_bytes = load_first(&c->freed_bytes);
        atomic_store_explicit(&c->peak_objects, load(&c->allocated_objects) - freed_objects,
                              memory_order_relaxed);
        atomic_store_explicit(&c->peak_bytes, load(&c->allocated_bytes) - freed_bytes,
                              memory_order_relaxed);
    }
}

static int past_last_snapshot(int64_t total)
{
    uint64_t last = atomic_load_explicit(&snapshot_total, memory_order_relaxed);
    return total > 0 && (uint64_t)total > last + last / 100;
}

static void hand_on(int64_t change)
{
    int64_t total = atomic_fetch_add_explicit(&live_total, change, memory_order_relaxed) + change;
    if (change <= 0 || !past_last_snapshot(total))
        return;
    if (atomic_exchange_explicit(&snapshotting, 1, memory_order_acquire) != 0)
        return; /* another thread takes one now */
    if (past_last_snapshot(total)) {
        take_snapshot();
        atomic_store_explicit(&snapshot_total, (uint64_t)total, memory_order_relaxed);
    }
    atomic_store_explicit(&snapshotting, 0, memory_order_release);
}

static void change_live(int64_t change)
{
    int64_t now = unflushed + change;
    if (now >= STACK_COUNTS_UNFLUSHED_MAX || now <= -STACK_COUNTS_UNFLUSHED_MAX) {
        unflushed = 0;
        hand_on(now);
    } else {
        unflushed = now;
    }
}

void stack_counts_after_fork_in_child(void)
{
    atomic_store_explicit(&snapshotting, 0, memory_order_relaxed);
}

void stack_counts_flush(void)
{
    int64_t now = unflushed;
    unflushed = 0;
    if (now != 0)
        hand_on(now);
}

/* A stack's first allocation decides whether it is counted (the one
 * thread whose compare-and-swap sets its origin also lists it); out of
 * line, so that the common path is a load and a compare. */
__attribute__((noinline)) static uint64_t decide_origin(stack_id stack, struct stack_counts *c)
{
    uint64_t origin = STACK_ORIGIN_UNKNOWN;
    uint64_t decided = in_library(stack) ? STACK_ORIGIN_LIBRARY : STACK_ORIGIN_PROGRAM;
    if (!atomic_compare_exchange_strong_explicit(&c->origin, &origin, decided, memory_order_acq_rel,
                                                 memory_order_acquire))
        return origin;
    if (decided == STACK_ORIGIN_PROGRAM)
        list_stack(stack);
    return decided;
}

/* A free or a resize: its block was counted at its allocation, or not. */
static int was_counted(const struct stack_counts *c)
{
    return atomic_load_explicit(&c->origin, memory_order_relaxed) == STACK_ORIGIN_PROGRAM;
}

void stack_counts_allocated(stack_id stack, size_t bytes)
{
    struct stack_counts *c = stack_depot_counts(stack);
    uint64_t origin = atomic_load_explicit(&c->origin, memory_order_acquire);
    if (__builtin_expect(origin == STACK_ORIGIN_UNKNOWN, 0))
        origin = decide_origin(stack, c);
    if (origin != STACK_ORIGIN_PROGRAM)
        return;
    atomic_fetch_add_explicit(&c->allocated_objects, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->allocated_bytes, bytes, memory_order_relaxed);
    change_live((int64_t)bytes);
}

void stack_counts_freed(stack_id stack, size_t bytes)
{
    struct stack_counts *c = stack_depot_counts(stack);
    if (!was_counted(c))
        return;
    atomic_fetch_add_explicit(&c->freed_objects, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->freed_bytes, bytes, memory_order_relaxed);
    change_live(-(int64_t)bytes);
}

void stack_counts_resized(stack_id stack, size_t old_bytes, size_t new_bytes)
{
    struct stack_counts *c = stack_depot_counts(stack);
    if (!was_counted(c))
        return;
    if (new_bytes > old_bytes)
        atomic_fetch_add_explicit(&c->allocated_bytes, new_bytes - old_bytes, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&c->freed_bytes, old_bytes - new_bytes, memory_order_relaxed);
    change_live((int64_t)new_bytes - (int64_t)old_bytes);
}

void stack_counts_read(stack_id stack, struct stack_totals *out)
{
    struct stack_counts *c = stack_depot_counts(stack);
    uint64_t freed_objects = load_first(&c->freed_objects);
    uint64_t freed_bytes = load_first(&c->freed_bytes);
    out->allocated_objects = load(&c->allocated_objects);
    out->allocated_bytes = load(&c->allocated_bytes);
    /* A free counted between the two reads of another thread's
     * allocation cannot make in-use negative: freed is read first. */
    out->inuse_objects = out->allocated_objects - freed_objects;
    out->inuse_bytes = out->allocated_bytes - freed_bytes;
    out->peak_objects = load(&c->peak_objects);
    out->peak_bytes = load(&c->peak_bytes);
}

uint64_t stack_counts_live_bytes(void)
{
    int64_t total = atomic_load_explicit(&live_total, memory_order_relaxed);
    return total > 0 ? (uint64_t)total : 0;
}

uint64_t stack_counts_peak_bytes(void)
{
    return atomic_load_explicit(&snapshot_total, memory_order_relaxed);
}
