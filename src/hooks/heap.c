/* heap.c: recorded allocation and release: header, guards, registry,
 * quarantine, and the checks that find heap errors.
 * World: normal (it is the allocator); the checks it shares with the
 * crash handler are signal-safe (block.c).
 *
 * A block is ours exactly when the block set has it. Anything else handed
 * to free or realloc was allocated before the hook layer was ready (by the
 * loader, another library's constructor) or with heap=0: it goes to glibc
 * as it is, unless it is plainly not a block (misaligned) or points inside
 * one of ours. */
#define _GNU_SOURCE
#include "heap.h"
#include "block_set.h"
#include "guard_pool.h"
#include "heap_report.h"
#include "quarantine.h"
#include "stack_counts.h"
#include "state.h"

#include "../base/maps_reader.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <sched.h>
#include <string.h>
#include <time.h>

/* glibc's malloc_usable_size, which ours replaces: its musable() on the
 * chunk's size word (the 8 bytes before the pointer; bit 1 marks an mmapped
 * chunk, whose header is 16 bytes, an arena chunk lends its successor's
 * first 8). Computed here rather than reached with dlsym, which allocates
 * and may take the loader's lock from inside malloc. */
static size_t glibc_usable_size(void *real)
{
    size_t word = ((const size_t *)real)[-1];
    size_t chunk = word & ~(size_t)7;
    size_t overhead = (word & 2) ? 16 : 8;
    return chunk > overhead ? chunk - overhead : 0;
}

/* glibc's mmapped chunks (bit 1 of the size word) come fresh from mmap:
 * already zero, as glibc's calloc knows. */
static int glibc_chunk_is_mmapped(void *real)
{
    return (((const size_t *)real)[-1] & 2) != 0;
}

/* HEADROOM: bytes of slack beyond the guard that a realloc may grow into
 * in place later. */
static void *allocate_recorded(size_t size, size_t alignment, int with_stack, int zeroed,
                               size_t headroom)
{
    size_t real_size = size > BLOCK_SIZE_MAX ? 0 : block_real_size(&heap.layout, size + headroom,
                                                                   alignment);
    if (real_size == 0) {
        errno = ENOMEM;
        return NULL;
    }
    /* The library's own allocations (a report, the index build) are
     * blocks like any other, without the cost of a stack. */
    stack_id stack = with_stack ? heap_capture(HEAP_CAPTURE_ALLOCATION) : 0;
    void *real = alignment <= 16 ? __libc_malloc(real_size)
                                 : __libc_memalign(alignment, real_size);
    if (real == NULL)
        return NULL;
    uintptr_t user = (uintptr_t)real + block_front(&heap.layout, alignment);
    size_t usable = glibc_usable_size(real) - block_front(&heap.layout, alignment);
    block_prepare(&heap.layout, user, size, alignment, stack, usable);
    if (!zeroed)
        block_fill(user, size, heap.options.fill_max, heap.options.alloc_fill);
    else if (!glibc_chunk_is_mmapped(real))
        memset((void *)user, 0, size); /* a fresh mmapped chunk is zero already */
    if (block_set_insert(user) != 0) {
        __libc_free(real);
        errno = ENOMEM;
        return NULL;
    }
    if (stack != 0) /* the library's own blocks are in no profile */
        stack_counts_allocated(stack, size);
    return (void *)user;
}

/* guard_pages: the program's blocks (not the library's own) in the guard
 * pool, or NULL to fall back to an ordinary block. */
static void *allocate_guarded(size_t size, size_t alignment, int with_stack)
{
    if (heap.options.guard_pages == 0 || !with_stack || size > heap.options.guard_pages_max)
        return NULL;
    stack_id stack = heap_capture(HEAP_CAPTURE_ALLOCATION);
    void *user = guard_pool_allocate(size, alignment, stack);
    if (user != NULL && stack != 0)
        stack_counts_allocated(stack, size);
    return user;
}

void *heap_allocate(size_t size, size_t alignment)
{
    if (!heap_ready())
        return alignment <= 16 ? __libc_malloc(size) : __libc_memalign(alignment, size);
    int with_stack = heap_busy == 0;
    heap_busy++;
    void *user = allocate_guarded(size, alignment, with_stack);
    if (user == NULL)
        user = allocate_recorded(size, alignment, with_stack, 0, 0);
    heap_busy--;
    return user;
}

void *heap_allocate_zeroed(size_t size)
{
    if (!heap_ready())
        return __libc_calloc(1, size); /* heap=0: glibc's calloc, which skips fresh pages */
    int with_stack = heap_busy == 0;
    heap_busy++;
    void *user = allocate_guarded(size, 16, with_stack);
    if (user != NULL)
        memset(user, 0, size); /* a slot handed out again holds its last block's bytes */
    else
        user = allocate_recorded(size, 16, with_stack, 1, 0);
    heap_busy--;
    return user;
}

static void report(enum heap_error kind, uintptr_t address, uintptr_t block,
                   const struct block_facts *facts, stack_id free_stack, const char *found)
{
    struct heap_error_facts error = {
        .kind = kind, .address = address, .block = block,
        .size_known = facts != NULL, .size = facts != NULL ? facts->size : 0,
        .offset = (long)(address - block),
        .alloc_stack = facts != NULL ? facts->alloc_stack : 0,
        .free_stack = free_stack, .found = found,
    };
    heap_report_error(&error);
}

/* Guards, and for a freed block its fill: report what was damaged. */
void heap_check_block(uintptr_t user, const struct block_facts *facts, stack_id free_stack,
                        const char *found)
{
    long damage;
    if (block_guards_damaged(&heap.layout, user, facts->size, &damage))
        report(damage < 0 ? HEAP_UNDERFLOW : HEAP_OVERFLOW, user + (uintptr_t)damage, user,
               facts, free_stack, found);
    size_t changed;
    if (facts->state == BLOCK_FREED &&
        block_fill_changed(user, facts->size, heap.options.fill_max, heap.options.free_fill,
                           &changed))
        report(HEAP_USE_AFTER_FREE, user + changed, user, facts, free_stack, found);
}

int heap_wait_for_scans(void)
{
    static _Atomic int stuck; /* a wait timed out: do not wait again */
    /* After the blocks' removal from the set (atomic read-modify-writes):
     * a walk that may still read one was counted before that; a walk that
     * begins after it no longer finds them. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (heap_scans_running() == 0) {
        __atomic_store_n(&stuck, 0, __ATOMIC_RELAXED);
        return 1;
    }
    if (__atomic_load_n(&stuck, __ATOMIC_RELAXED))
        return 0;
    for (int i = 0; heap_scans_running() != 0; i++) {
        if (i == 2000) {
            /* About 2 s: a walk that never ends (a longjmp out of a
             * describe) or writes to a pipe nobody reads. Until none runs,
             * evicted blocks are kept (leaked) without waiting. */
            __atomic_store_n(&stuck, 1, __ATOMIC_RELAXED);
            return 0;
        }
        if (i < 100) {
            sched_yield();
        } else {
            struct timespec pause = { 0, 1000 * 1000 };
            nanosleep(&pause, NULL);
        }
    }
    return 1;
}

/* The blocks eviction checks are cold (the quarantine is megabytes long):
 * each asked for a few blocks ahead, its header and first bytes. */
#define EVICT_PREFETCH_AHEAD 4

static void prefetch_block(uintptr_t user)
{
    __builtin_prefetch((const void *)(user - 64));
    __builtin_prefetch((const void *)user);
    __builtin_prefetch((const void *)(user + 64));
}

/* Out of the quarantine: last checks, out of the block set, then back to
 * glibc, all of them after one wait for the walks (one fence for the
 * batch, not one a block). */
static void evict(const struct quarantined *blocks, size_t count, void *context)
{
    (void)context;
    void *reals[QUARANTINE_EVICT_MAX];
    size_t releasing = 0;
    heap_busy++; /* also called at thread exit and in a fork child */
    for (size_t i = 0; i < count; i++) {
        if (i + EVICT_PREFETCH_AHEAD < count)
            prefetch_block(blocks[i + EVICT_PREFETCH_AHEAD].user);
        const struct quarantined *block = &blocks[i];
        struct block_facts facts;
        if (block_read(&heap.layout, block->user, &facts)) {
            heap_check_block(block->user, &facts, block->free_stack, "at quarantine eviction");
            block_set_remove(block->user);
            reals[releasing++] = (void *)block_real(&heap.layout, block->user, facts.alignment);
        } else {
            /* The header was overwritten while the block sat freed: keep it
             * out of glibc, whose free would trust what is there now. */
            report(HEAP_DAMAGED_HEADER, block->user, block->user, NULL, block->free_stack,
                   "at quarantine eviction");
            block_set_remove(block->user);
        }
    }
    /* Kept from glibc (leaked) if a walk that may read them never ends. */
    if (releasing > 0 && heap_wait_for_scans()) {
        for (size_t i = 0; i < releasing; i++)
            __libc_free(reals[i]);
    }
    heap_busy--;
}

/* The block whose user bytes hold ADDRESS (not at their start), if any. */
static uintptr_t block_around(uintptr_t address, struct block_facts *facts)
{
    uintptr_t block = block_set_last_at_or_before(address - 1);
    if (block == 0 || !block_read(&heap.layout, block, facts) ||
        address - block >= facts->size + (facts->size == 0))
        return 0;
    return block;
}

/* The mapping of the calling thread's stack, remembered per thread (found
 * again when the stack pointer has left it: the main stack grows). */
static __thread uintptr_t stack_low __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_high __attribute__((tls_model("initial-exec")));

static int in_own_stack(uintptr_t address)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (sp < stack_low || sp >= stack_high) {
        struct maps_entry entry;
        if (maps_find(sp, &entry) != 0)
            return 0;
        stack_low = entry.start;
        stack_high = entry.end;
    }
    return address >= stack_low && address < stack_high;
}

/* A 16-aligned pointer glibc never gave out: into the calling thread's
 * stack or into a loaded module (its code, data or bss). glibc's free
 * would abort with "free(): invalid pointer" or trust whatever lies
 * before it as a chunk header. Another thread's stack is an anonymous
 * mapping like glibc's arenas and is not told apart. */
static const char *not_a_heap_region(uintptr_t address, const char **module)
{
    struct dl_find_object object;
    if (_dl_find_object((void *)address, &object) == 0) {
        const struct link_map *map = object.dlfo_link_map;
        *module = map != NULL && map->l_name != NULL ? map->l_name : "";
        return "module";
    }
    return in_own_stack(address) ? "stack" : NULL;
}

/* ADDRESS, given to free or realloc, is not one of our blocks. Reported
 * (and 1 returned) when it plainly is no heap block at all: inside one of
 * ours, in a stack or a module, or (before any malloc_set_state)
 * misaligned. Otherwise it is glibc's: allocated before the hook layer
 * was ready, or with heap=0, or known to a restored state. */
static int report_if_no_block(uintptr_t address, const char *found)
{
    struct block_facts facts;
    uintptr_t block = block_around(address, &facts);
    if (block != 0) {
        report(HEAP_INTERIOR_FREE, address, block, &facts, 0, found);
        return 1;
    }
    const char *module = NULL;
    const char *region = not_a_heap_region(address, &module);
    if (region != NULL || (!state_restored() && address % 16 != 0)) {
        struct heap_error_facts error = {
            .kind = HEAP_INVALID_FREE, .address = address, .found = found,
            .region = region, .module = module,
        };
        heap_report_error(&error);
        return 1;
    }
    return 0;
}

/* Not ours: glibc's, unless it is plainly not a block pointer. After a
 * malloc_set_state, the restored state may know pointers the registry
 * never saw: those pass through unreported. */
static void release_foreign(void *pointer)
{
    uintptr_t address = (uintptr_t)pointer;
    if (heap.recording) {
        if (report_if_no_block(address, "at free"))
            return;
        if (state_restored())
            state_forget(address);
    }
    __libc_free(pointer);
}

static void release_recorded(uintptr_t user, int with_stack)
{
    struct block_facts facts;
    if (!block_read(&heap.layout, user, &facts)) {
        report(HEAP_DAMAGED_HEADER, user, user, NULL, 0, "at free");
        return; /* leaked on purpose: its bookkeeping cannot be trusted */
    }
    if (facts.state != BLOCK_LIVE) { /* freed, or being freed by another thread */
        struct quarantined earlier = { 0 };
        quarantine_find(user, &earlier);
        report(HEAP_DOUBLE_FREE, user, user, &facts, earlier.free_stack, "at free");
        return;
    }
    if (!block_claim_free(&heap.layout, user)) {
        /* Another thread freed it between our read and now. */
        report(HEAP_DOUBLE_FREE, user, user, &facts, 0, "at free");
        return;
    }
    /* FREED only once filled: a check that runs meanwhile on another
     * thread (backtrace_heap_check, the crash report's heap section) must
     * never see a freed block without its fill, which it would report as a
     * use after free (found by make stress). Filled after the claim: a
     * racing second free must not write into memory the first one may
     * already have given back to glibc. */
    if (facts.alloc_stack != 0)
        stack_counts_freed(facts.alloc_stack, facts.size);
    block_fill(user, facts.size, heap.options.fill_max, heap.options.free_fill);
    block_finish_free(&heap.layout, user);
    if (state_restored())
        state_forget(user); /* an address a restored record had is reused */
    heap_check_block(user, &facts, 0, "at free");
    /* The free stack is kept only while the block is in the quarantine:
     * without one (the profiler), the walk and a depot entry per freeing
     * stack would buy nothing. */
    int keep_stack = with_stack && quarantine_would_hold(facts.size);
    struct quarantined block = { user, facts.size, keep_stack ? heap_capture(HEAP_CAPTURE_FREE) : 0 };
    quarantine_push_batched(&block, evict, NULL);
}

/* A block of the guard pool: its pages made inaccessible; a second free
 * or a pointer inside it reported as for any block. */
static void release_guarded(uintptr_t user, int with_stack)
{
    struct guard_block facts;
    stack_id stack = with_stack ? heap_capture(HEAP_CAPTURE_FREE) : 0;
    if (guard_pool_release(user, stack, &facts) == 0) {
        if (facts.alloc_stack != 0)
            stack_counts_freed(facts.alloc_stack, facts.size);
        return;
    }
    struct block_facts block = { .size = facts.size, .alignment = 16,
                                 .alloc_stack = facts.alloc_stack };
    int known = facts.user != 0;
    report(known && facts.user == user && facts.state != GUARD_SLOT_LIVE ? HEAP_DOUBLE_FREE
                                                                          : known ? HEAP_INTERIOR_FREE
                                                                                  : HEAP_INVALID_FREE,
           user, known ? facts.user : 0, known ? &block : NULL, facts.free_stack, "at free");
}

void heap_release(void *pointer)
{
    if (pointer == NULL)
        return;
    if (guard_pool_contains((uintptr_t)pointer)) {
        int with_stack = heap_busy == 0;
        heap_busy++;
        release_guarded((uintptr_t)pointer, with_stack);
        heap_busy--;
        return;
    }
    if (!heap.recording) {
        __libc_free(pointer); /* heap=0, or before initialisation: none is ours */
        return;
    }
    /* The set is asked even when busy: a block is ours by membership alone. */
    int with_stack = heap_busy == 0;
    heap_busy++;
    if (block_set_contains((uintptr_t)pointer))
        release_recorded((uintptr_t)pointer, with_stack);
    else
        release_foreign(pointer);
    heap_busy--;
}

size_t heap_usable_size(void *pointer)
{
    if (pointer == NULL)
        return 0;
    if (guard_pool_contains((uintptr_t)pointer))
        return guard_pool_size((uintptr_t)pointer);
    if (heap.recording && block_set_contains((uintptr_t)pointer)) {
        /* What the user may use: the guard starts right after it. A freed
         * (quarantined) or damaged block has nothing usable. */
        struct block_facts facts;
        int live = block_read(&heap.layout, (uintptr_t)pointer, &facts) &&
                   facts.state == BLOCK_LIVE;
        return live ? facts.size : 0;
    }
    return glibc_usable_size(pointer);
}

#define REALLOC_HEADROOM_MAX ((size_t)64 << 10)

/* Bytes a shrink in place may leave unused without a move: a few, or
 * fewer than the block keeps (glibc gives the tail of a shrunk chunk back;
 * CPython shrinks every string it formats into an over-allocated buffer,
 * and kept in place those buffers took its peak memory from 1.0x to 1.5x
 * plain). */
#define SHRINK_SLACK 64

/* realloc within the real block, when it has room for SIZE and the rear
 * guard (glibc's slack, or a moved block's headroom): the guard moves, the
 * block and its allocation stack stay. Shrinking stays in place unless it
 * would leave more than SHRINK_SLACK bytes and more than SIZE unused, or
 * more than REALLOC_HEADROOM_MAX. */
static int resize_in_place(uintptr_t user, const struct block_facts *facts, size_t size)
{
    void *real = (void *)block_real(&heap.layout, user, facts->alignment);
    size_t front = block_front(&heap.layout, facts->alignment);
    size_t usable = glibc_usable_size(real);
    size_t room = usable > front ? usable - front : 0;
    if (size > room || room - size < heap.layout.rear_guard)
        return 0;
    size_t unused = room - size - heap.layout.rear_guard;
    if (size < facts->size &&
        (unused > REALLOC_HEADROOM_MAX || (unused > SHRINK_SLACK && unused > size)))
        return 0; /* give the memory back: move to a smaller block */
    block_resize(&heap.layout, user, facts->size, size);
    if (facts->alloc_stack != 0)
        stack_counts_resized(facts->alloc_stack, facts->size, size);
    if (size > facts->size)
        block_fill(user + facts->size, size - facts->size,
                   facts->size < heap.options.fill_max ? heap.options.fill_max - facts->size : 0,
                   heap.options.alloc_fill);
    return 1;
}

/* A guarded block always moves: a new block (guarded if it may be), the
 * bytes copied, the old one freed (and so made inaccessible: a reference
 * kept into it faults at its next use, as a std::vector's does). */
static void *reallocate_guarded(void *pointer, size_t size)
{
    size_t old_size = guard_pool_size((uintptr_t)pointer);
    if (old_size == 0 && size != 0) {
        heap_release(pointer); /* not live: reports the double or interior free */
        return NULL;
    }
    if (size == 0) {
        heap_release(pointer);
        return NULL;
    }
    void *moved = heap_allocate(size, 16);
    if (moved == NULL)
        return NULL;
    memcpy(moved, pointer, old_size < size ? old_size : size);
    heap_release(pointer);
    return moved;
}

void *heap_reallocate(void *pointer, size_t size)
{
    if (pointer == NULL)
        return heap_allocate(size, 16);
    if (guard_pool_contains((uintptr_t)pointer))
        return reallocate_guarded(pointer, size);
    int ours = heap.recording && block_set_contains((uintptr_t)pointer);
    if (!ours) {
        if (size == 0) {
            heap_release(pointer);
            return NULL;
        }
        if (heap.recording) {
            /* As free does: glibc would print "realloc(): invalid old
             * size" or trust user bytes that look like a chunk header. */
            heap_busy++;
            int reported = report_if_no_block((uintptr_t)pointer, "at realloc");
            heap_busy--;
            if (reported) {
                errno = EINVAL; /* on_error=report: the pointer is left alone */
                return NULL;
            }
        }
        if (state_restored())
            state_forget((uintptr_t)pointer);
        return __libc_realloc(pointer, size); /* stays glibc's, unrecorded */
    }
    struct block_facts facts;
    if (!block_read(&heap.layout, (uintptr_t)pointer, &facts) || facts.state != BLOCK_LIVE) {
        heap_release(pointer); /* reports the damage or the double free */
        return NULL;
    }
    if (size == 0) {
        heap_release(pointer); /* glibc: realloc(p, 0) frees and returns NULL */
        return NULL;
    }
    if (resize_in_place((uintptr_t)pointer, &facts, size))
        return pointer;
    /* A block that moves to grow gets headroom, so that growing it again
     * (a buffer grown a byte at a time) stays in place: amortized linear,
     * as glibc's realloc is by extending into the free chunk after it. */
    size_t headroom = size > facts.size ? size / 2 : 0;
    if (headroom > REALLOC_HEADROOM_MAX)
        headroom = REALLOC_HEADROOM_MAX;
    int with_stack = heap_busy == 0;
    heap_busy++;
    void *moved = allocate_recorded(size, 16, with_stack, 0, headroom);
    heap_busy--;
    if (moved == NULL)
        return NULL; /* the old block is untouched, as glibc leaves it */
    memcpy(moved, pointer, facts.size < size ? facts.size : size);
    heap_release(pointer);
    return moved;
}
