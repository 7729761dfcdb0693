/* leak_scan.c: the leak check's marking, with every other thread stopped
 * (leak.h): a snapshot of the live blocks, the roots, a flood fill from
 * them, then LSan's classification of what is left.
 * World: signal-safe. It runs while the other threads stand wherever the
 * stop found them, maybe inside malloc or the loader holding their
 * locks: no malloc, no lock, no stdio; the block set and the headers are
 * read without a lock, as the crash handler reads them; the memory it
 * needs was mapped before the stop.
 *
 * LSan's order (lsan_common.cpp, ClassifyAllChunks): ignored blocks and
 * the roots (globals, stacks, registers, TLS) flood REACHABLE; then the
 * blocks the loader allocated (LSan's use_ld_allocations) and what they
 * reach; then every block still unreached points its pointees, other
 * than itself, INDIRECT. So a leaked cycle that nothing else points into
 * is all indirect, as LSan says (google/sanitizers#212). */
#define _GNU_SOURCE
#include "leak.h"
#include "leak_arch.h"
#include "block_set.h"
#include "guard_pool.h"
#include "heap.h"
#include "../base/maps_reader.h"
#include "execinfo_ex.h"

#include <ucontext.h>

/* ---- the snapshot ---------------------------------------------------- */

static int snapshot_one(uintptr_t user, void *context)
{
    struct leak_scan *scan = context;
    struct block_facts facts;
    /* Being handed out or freed by a thread stopped halfway: not one of
     * the program's blocks yet, or not any more. */
    if (!block_read(&heap.layout, user, &facts) || facts.state != BLOCK_LIVE)
        return 0;
    if (scan->block_count == scan->block_capacity) {
        scan->blocks_missed = 1; /* a thread that could not be stopped allocates on */
        return 1;
    }
    scan->addresses[scan->block_count] = user;
    scan->blocks[scan->block_count++] = (struct leak_block){
        .user = user, .size = facts.size, .stack = facts.alloc_stack,
        .tag = LEAK_UNREACHED, .ignored = (uint8_t)facts.ignored,
    };
    return 0;
}

/* A live block of the guard pool (guard_pages, sample=N): in the
 * snapshot as any other. No ignore bit: backtrace_heap_ignore does not
 * know the pool's blocks. */
static void snapshot_guarded(uintptr_t user, size_t size, stack_id stack, void *context)
{
    struct leak_scan *scan = context;
    if (scan->block_count == scan->block_capacity) {
        scan->blocks_missed = 1;
        return;
    }
    scan->addresses[scan->block_count] = user;
    scan->blocks[scan->block_count++] = (struct leak_block){
        .user = user, .size = size, .stack = stack, .tag = LEAK_UNREACHED,
    };
}

/* In address order, which the search needs: the set's blocks below the
 * guard pool, the pool's (in address order too), the set's above it. */
static void take_snapshot(struct leak_scan *scan)
{
    scan->block_count = 0;
    uintptr_t pool_low = __atomic_load_n(&guard_pool_low, __ATOMIC_ACQUIRE);
    block_set_each_in(0, pool_low, snapshot_one, scan);
    guard_pool_each_live(snapshot_guarded, scan);
    if (pool_low + GUARD_POOL_SPAN > pool_low)
        block_set_each_in(pool_low + GUARD_POOL_SPAN, UINTPTR_MAX, snapshot_one, scan);
    scan->heap_low = scan->heap_high = 0;
    for (size_t i = 0; i < scan->block_count; i++) {
        const struct leak_block *block = &scan->blocks[i];
        uintptr_t end = block->user + (block->size > 0 ? block->size : 1);
        if (scan->heap_low == 0)
            scan->heap_low = block->user;
        if (end > scan->heap_high)
            scan->heap_high = end;
    }
}

/* The block ADDRESS points into (an interior pointer counts), or -1.
 * The search runs over the addresses alone (8 bytes an entry, not 24:
 * the search is most of a check's time, and its cost is cache misses). */
static long block_holding(const struct leak_scan *scan, uintptr_t address)
{
    if (address < scan->heap_low || address >= scan->heap_high)
        return -1;
    const uintptr_t *addresses = scan->addresses;
    size_t low = 0, count = scan->block_count;
    /* Branch-free: the comparison becomes a conditional move. */
    while (count > 1) {
        size_t half = count / 2;
        low = addresses[low + half] <= address ? low + half : low;
        count -= half;
    }
    low += count == 1 && addresses[low] <= address;
    if (low == 0)
        return -1;
    const struct leak_block *block = &scan->blocks[low - 1];
    if (address - block->user < block->size || address == block->user)
        return (long)(low - 1);
    return -1;
}

/* ---- marking ----------------------------------------------------------- */

struct frontier {
    uint32_t *entries;
    size_t count;
};

/* Every aligned word of [LOW, HIGH) that points into a block: tag it TAG
 * (REACHABLE: and push it, to scan it in turn). A block's pointer to
 * itself (SELF) does not count. */
static void scan_words(struct leak_scan *scan, struct frontier *frontier, uintptr_t low,
                       uintptr_t high, enum leak_tag tag, long self)
{
    for (uintptr_t at = (low + 7) & ~(uintptr_t)7; at + sizeof(uintptr_t) <= high;
         at += sizeof(uintptr_t)) {
        long index = block_holding(scan, *(const uintptr_t *)at);
        if (index < 0 || index == self)
            continue;
        struct leak_block *block = &scan->blocks[index];
        if (block->tag == LEAK_REACHABLE || block->tag == LEAK_IGNORED)
            continue;
        block->tag = (uint8_t)tag;
        if (tag == LEAK_REACHABLE)
            frontier->entries[frontier->count++] = (uint32_t)index;
    }
}

static void flood(struct leak_scan *scan, struct frontier *frontier)
{
    while (frontier->count > 0) {
        long index = frontier->entries[--frontier->count];
        const struct leak_block *block = &scan->blocks[index];
        scan_words(scan, frontier, block->user, block->user + block->size, LEAK_REACHABLE, index);
    }
}

/* ---- roots ------------------------------------------------------------- */

static int keep_readable(const struct maps_entry *entry, void *context)
{
    struct leak_scan *scan = context;
    if (!entry->readable)
        return 0;
    if (scan->readable_count == scan->readable_capacity)
        return 1;
    scan->readable[scan->readable_count++] = (struct leak_range){ entry->start, entry->end };
    return 0;
}

/* The first readable mapping that ends above ADDRESS. */
static size_t first_readable_above(const struct leak_scan *scan, uintptr_t address)
{
    size_t low = 0, high = scan->readable_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (scan->readable[middle].high <= address)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* [LOW, HIGH) as a root, skipping what cannot be read (guard pages,
 * holes). */
static void scan_root(struct leak_scan *scan, struct frontier *frontier, uintptr_t low,
                      uintptr_t high)
{
    for (size_t i = first_readable_above(scan, low);
         i < scan->readable_count && scan->readable[i].low < high; i++) {
        uintptr_t from = low > scan->readable[i].low ? low : scan->readable[i].low;
        uintptr_t to = high < scan->readable[i].high ? high : scan->readable[i].high;
        scan_words(scan, frontier, from, to, LEAK_REACHABLE, -1);
    }
}

/* A stack, from just below STACK_POINTER (the red zone) to the end of the
 * mapping that holds it. Returns 0 if no readable mapping holds it. */
static int scan_stack(struct leak_scan *scan, struct frontier *frontier, uintptr_t stack_pointer)
{
    size_t i = first_readable_above(scan, stack_pointer);
    if (stack_pointer == 0 || i == scan->readable_count || scan->readable[i].low > stack_pointer)
        return 0;
    uintptr_t low = stack_pointer - leak_arch_red_zone();
    if (low < scan->readable[i].low || low > stack_pointer)
        low = scan->readable[i].low;
    scan_words(scan, frontier, low, scan->readable[i].high, LEAK_REACHABLE, -1);
    return 1;
}

static void scan_static_tls(struct leak_scan *scan, struct frontier *frontier,
                            uintptr_t thread_pointer)
{
    if (thread_pointer == 0 || scan->static_tls_size == 0)
        return;
    uintptr_t low, high;
    leak_arch_static_tls(thread_pointer, scan->static_tls_size, &low, &high);
    scan_root(scan, frontier, low, high);
}

static void note_unstopped(struct leak_scan *scan, const struct backtrace_stopped_thread *thread,
                           int scanned)
{
    if (scan->threads_unstopped < LEAK_UNSTOPPED_NAMED) {
        scan->unstopped[scan->threads_unstopped] = thread->tid;
        scan->unstopped_why[scan->threads_unstopped] = thread->why;
    }
    scan->threads_unstopped++;
    scan->unstopped_unscanned += !scanned;
}

static void scan_threads(struct leak_scan *scan, struct frontier *frontier,
                         const struct backtrace_stopped_thread *threads, int count)
{
    scan_stack(scan, frontier, scan->self_stack_pointer);
    scan_static_tls(scan, frontier, scan->self_thread_pointer);
    for (int i = 0; i < count; i++) {
        const struct backtrace_stopped_thread *thread = &threads[i];
        if (thread->stopped) {
            uintptr_t registers = (uintptr_t)thread->ucontext;
            scan_words(scan, frontier, registers, registers + sizeof(ucontext_t),
                       LEAK_REACHABLE, -1);
        }
        /* One that could not be stopped: scanned as it is, where known. */
        int scanned = scan_stack(scan, frontier, thread->stack_pointer);
        scan_static_tls(scan, frontier, thread->thread_pointer);
        if (!thread->stopped)
            note_unstopped(scan, thread, scanned);
    }
    scan->threads_seen = count + 1;
}

static int in_ranges(const struct leak_range *ranges, size_t count, uintptr_t address)
{
    for (size_t i = 0; i < count; i++)
        if (address >= ranges[i].low && address < ranges[i].high)
            return 1;
    return 0;
}

/* LSan's use_ld_allocations: a block the loader allocated (its caller is
 * in ld.so: dynamic TLS, the dtv, link maps) is reachable, since the
 * loader's own pointers to it live in memory no module maps. */
static void reach_loader_blocks(struct leak_scan *scan, struct frontier *frontier)
{
    for (size_t i = 0; i < scan->block_count; i++) {
        struct leak_block *block = &scan->blocks[i];
        void *caller;
        uint32_t thread;
        if (block->tag != LEAK_UNREACHED && block->tag != LEAK_INDIRECT)
            continue;
        if (heap_stack_frames(block->stack, &thread, &caller, 1) == 1 &&
            in_ranges(scan->loader, scan->loader_count, (uintptr_t)caller)) {
            block->tag = LEAK_REACHABLE;
            frontier->entries[frontier->count++] = (uint32_t)i;
        }
    }
    flood(scan, frontier);
}

static void mark_indirect(struct leak_scan *scan, struct frontier *frontier)
{
    for (size_t i = 0; i < scan->block_count; i++) {
        const struct leak_block *block = &scan->blocks[i];
        if (block->tag == LEAK_REACHABLE || block->tag == LEAK_IGNORED)
            continue;
        scan_words(scan, frontier, block->user, block->user + block->size, LEAK_INDIRECT,
                   (long)i);
    }
}

int leak_scan_stopped(const struct backtrace_stopped_thread *threads, int count, void *context)
{
    struct leak_scan *scan = context;
    struct frontier frontier = { scan->frontier, 0 };
    scan->readable_count = 0;
    maps_for_each(keep_readable, scan);
    take_snapshot(scan);
    /* Ignored, and the blocks with no stack: allocated by this library
     * or the core's symbolizer for their own use (heap_busy), never the
     * program's leaks. */
    for (size_t i = 0; i < scan->block_count; i++) {
        if (scan->blocks[i].ignored || scan->blocks[i].stack == 0) {
            scan->blocks[i].tag = LEAK_IGNORED;
            frontier.entries[frontier.count++] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < scan->global_count; i++)
        scan_root(scan, &frontier, scan->globals[i].low, scan->globals[i].high);
    scan_threads(scan, &frontier, threads, count);
    flood(scan, &frontier);
    reach_loader_blocks(scan, &frontier);
    mark_indirect(scan, &frontier);
    return 0;
}
