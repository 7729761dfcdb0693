/* allocator.c: the C library's allocation functions, replaced for the
 * whole process, and bionic's four hook pointers in front of them.
 * World: normal (these are malloc).
 *
 * Each entry point calls its hook when one is set (bionic's rules: calloc
 * through the malloc hook then zeroing; posix_memalign and aligned_alloc
 * through the memalign hook, for a power-of-two alignment only; valloc and
 * pvalloc through it with the page size; malloc_usable_size has none), and
 * otherwise the default, heap.c, which records or passes through. mtrace()
 * sees every call here, as the program made it (mtrace.c). */
#define _GNU_SOURCE
#include "heap.h"
#include "mtrace.h"
#include "guard_pool.h"
#include "sample.h"
#include "state.h"
#include "execinfo_ex.h"
#include "../base/caller_entry.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORTED __attribute__((visibility("default")))

static void *default_malloc(size_t size, const void *caller)
{
    (void)caller;
    return heap_allocate(size, 16);
}

static void *default_realloc(void *pointer, size_t size, const void *caller)
{
    (void)caller;
    return heap_reallocate(pointer, size);
}

static void default_free(void *pointer, const void *caller)
{
    (void)caller;
    heap_release(pointer);
}

static int is_power_of_two(size_t value)
{
    return value != 0 && (value & (value - 1)) == 0;
}

/* glibc's memalign: a non-power-of-two alignment is rounded up (to 16
 * at least), one too large is EINVAL (0 then). */
static size_t memalign_alignment(size_t alignment)
{
    if (alignment > SIZE_MAX / 2 + 1)
        return 0;
    size_t rounded = 16;
    while (rounded < alignment)
        rounded <<= 1;
    return rounded;
}

static void *default_memalign(size_t alignment, size_t size, const void *caller)
{
    (void)caller;
    size_t rounded = memalign_alignment(alignment);
    if (rounded == 0) {
        errno = EINVAL;
        return NULL;
    }
    return heap_allocate(size, rounded);
}

EXPORTED void *(*volatile __malloc_hook)(size_t, const void *);
EXPORTED void *(*volatile __realloc_hook)(void *, size_t, const void *);
EXPORTED void (*volatile __free_hook)(void *, const void *);
EXPORTED void *(*volatile __memalign_hook)(size_t, size_t, const void *);

/* LIBC_HOOKS_ENABLE=1 (bionic's name; LIBC_HOOK_ENABLE=1 also): each
 * pointer starts at the default, which a replacing hook calls. */
__attribute__((constructor(101)))
static void enable_hooks_from_environment(void)
{
    const char *enable = getenv("LIBC_HOOKS_ENABLE");
    if (enable == NULL)
        enable = getenv("LIBC_HOOK_ENABLE");
    if (enable == NULL || strcmp(enable, "1") != 0)
        return;
    __malloc_hook = default_malloc;
    __realloc_hook = default_realloc;
    __free_hook = default_free;
    __memalign_hook = default_memalign;
}

/* Each entry point below is a few instructions of assembly that pass
 * what the entry saw of its caller to the C body (caller_entry.h): the
 * allocation's stack then starts at the caller, without stepping through
 * this library's frames (heap_caller, heap.h). Through a user's hook the
 * stack is walked from inside as before: the hook's frames are the
 * program's. A hook pointer left at its default (LIBC_HOOKS_ENABLE=1 with
 * no hook of the user's) is no user's code: the caller is kept. */
#define ENTERED __attribute__((visibility("hidden"), used, noinline))

static const struct backtrace_caller *enter(const struct backtrace_caller *caller, int hooked)
{
    const struct backtrace_caller *outer = heap_caller;
    heap_caller = hooked ? NULL : caller;
    return outer;
}

#define LEAVE(outer) (heap_caller = (outer))

/* heap=0 with no hook set and no trace: glibc's allocator at once, so
 * that loading the library costs a call nothing but a few tests. */
static inline int straight_to_glibc(const void *hook)
{
    return hook == NULL && !atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) &&
           !heap_ready();
}

/* sample=N picked this allocation: its stack starts at the caller. */
__attribute__((noinline)) static void *sampled(size_t size, size_t alignment, int zeroed,
                                               const struct backtrace_caller *caller)
{
    const struct backtrace_caller *outer = enter(caller, 0);
    void *pointer = sample_allocate(size, alignment, zeroed);
    LEAVE(outer);
    return pointer;
}

/* With recording off, a pointer in the guard pool is a sample's. */
__attribute__((noinline)) static void free_sampled(void *pointer,
                                                   const struct backtrace_caller *caller)
{
    const struct backtrace_caller *outer = enter(caller, 0);
    heap_release(pointer);
    LEAVE(outer);
}

CALLER_ENTRY(malloc, malloc_entered, 1);
ENTERED void *malloc_entered(size_t size, const struct backtrace_caller *caller)
{
    const void *from = caller->return_address;
    void *(*hook)(size_t, const void *) = __malloc_hook;
    if (straight_to_glibc(hook))
        return __builtin_expect(!sample_take(), 1) ? __libc_malloc(size)
                                                   : sampled(size, 16, 0, caller);
    const struct backtrace_caller *outer = enter(caller, hook != NULL && hook != default_malloc);
    void *pointer = hook != NULL ? hook(size, from) : default_malloc(size, from);
    LEAVE(outer);
    mtrace_allocation(from, pointer, size);
    return pointer;
}

CALLER_ENTRY(free, free_entered, 1);
ENTERED void free_entered(void *pointer, const struct backtrace_caller *caller)
{
    const void *from = caller->return_address;
    void (*hook)(void *, const void *) = __free_hook;
    if (hook == NULL && !atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) &&
        !heap.recording) {
        if (__builtin_expect(guard_pool_contains((uintptr_t)pointer), 0))
            free_sampled(pointer, caller);
        else
            __libc_free(pointer); /* heap=0, or before initialisation: none is ours */
        return;
    }
    mtrace_release(from, pointer);
    const struct backtrace_caller *outer = enter(caller, hook != NULL && hook != default_free);
    if (hook != NULL)
        hook(pointer, from);
    else
        default_free(pointer, from);
    LEAVE(outer);
}

CALLER_ENTRY(calloc, calloc_entered, 2);
ENTERED void *calloc_entered(size_t count, size_t size, const struct backtrace_caller *caller)
{
    const void *from = caller->return_address;
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    /* Bionic's rule: a hook, then zeroing. The default knows which pages
     * are zero already (a 2 GiB calloc touched once stays unresident). */
    void *(*hook)(size_t, const void *) = __malloc_hook;
    if (straight_to_glibc(hook))
        return __builtin_expect(!sample_take(), 1) ? __libc_calloc(count, size)
                                                   : sampled(total, 16, 1, caller);
    int hooked = hook != NULL && hook != default_malloc;
    const struct backtrace_caller *outer = enter(caller, hooked);
    void *pointer;
    if (hooked) {
        pointer = hook(total, from);
        if (pointer != NULL)
            memset(pointer, 0, total);
    } else {
        pointer = heap_allocate_zeroed(total);
    }
    LEAVE(outer);
    mtrace_allocation(from, pointer, total);
    return pointer;
}

/* The trace's lock is held across the default realloc (mtrace.c says
 * why), never across a user's hook, which runs code of its own. */
static void *traced_realloc(void *pointer, size_t size, const struct backtrace_caller *caller)
{
    const void *from = caller->return_address;
    void *(*hook)(void *, size_t, const void *) = __realloc_hook;
    const struct backtrace_caller *outer = enter(caller, hook != NULL && hook != default_realloc);
    void *moved;
    if (hook != NULL) {
        moved = hook(pointer, size, from);
        mtrace_reallocation(from, pointer, moved, size);
    } else {
        int traced = mtrace_realloc_begin();
        moved = default_realloc(pointer, size, from);
        if (traced)
            mtrace_realloc_end(from, pointer, moved, size);
    }
    LEAVE(outer);
    return moved;
}

CALLER_ENTRY(realloc, realloc_entered, 2);
ENTERED void *realloc_entered(void *pointer, size_t size, const struct backtrace_caller *caller)
{
    /* As free: with heap=0 no block is ours, unless a restored state
     * handed some over (heap_reallocate forgets them). */
    if (__realloc_hook == NULL && !atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) &&
        !heap.recording && !state_restored()) {
        if (__builtin_expect(guard_pool_contains((uintptr_t)pointer), 0)) {
            const struct backtrace_caller *outer = enter(caller, 0);
            void *moved = heap_reallocate(pointer, size);
            LEAVE(outer);
            return moved;
        }
        return __libc_realloc(pointer, size);
    }
    return traced_realloc(pointer, size, caller);
}

CALLER_ENTRY(reallocarray, reallocarray_entered, 3);
ENTERED void *reallocarray_entered(void *pointer, size_t count, size_t size,
                                   const struct backtrace_caller *caller)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return traced_realloc(pointer, total, caller);
}

static void *through_memalign_hook(size_t alignment, size_t size,
                                   const struct backtrace_caller *caller)
{
    const void *from = caller->return_address;
    void *(*hook)(size_t, size_t, const void *) = __memalign_hook;
    /* sample=N: aligned blocks are sampled too, at their alignment (a
     * slot's page allows up to 4096; beyond, glibc's). */
    if (straight_to_glibc(hook) && __builtin_expect(sample_take(), 0) &&
        memalign_alignment(alignment) != 0)
        return sampled(size, memalign_alignment(alignment), 0, caller);
    const struct backtrace_caller *outer =
        enter(caller, hook != NULL && hook != default_memalign);
    void *pointer = hook != NULL ? hook(alignment, size, from)
                                 : default_memalign(alignment, size, from);
    LEAVE(outer);
    mtrace_allocation(from, pointer, size);
    return pointer;
}

CALLER_ENTRY(memalign, memalign_entered, 2);
ENTERED void *memalign_entered(size_t alignment, size_t size, const struct backtrace_caller *caller)
{
    return through_memalign_hook(alignment, size, caller);
}

CALLER_ENTRY(posix_memalign, posix_memalign_entered, 3);
ENTERED int posix_memalign_entered(void **out, size_t alignment, size_t size,
                                   const struct backtrace_caller *caller)
{
    if (!is_power_of_two(alignment) || alignment % sizeof(void *) != 0)
        return EINVAL;
    int saved_errno = errno;
    void *pointer = through_memalign_hook(alignment, size, caller);
    errno = saved_errno; /* posix_memalign reports through its result only */
    if (pointer == NULL)
        return ENOMEM;
    *out = pointer;
    return 0;
}

CALLER_ENTRY(aligned_alloc, aligned_alloc_entered, 2);
ENTERED void *aligned_alloc_entered(size_t alignment, size_t size,
                                    const struct backtrace_caller *caller)
{
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return through_memalign_hook(alignment, size, caller);
}

CALLER_ENTRY(valloc, valloc_entered, 1);
ENTERED void *valloc_entered(size_t size, const struct backtrace_caller *caller)
{
    return through_memalign_hook((size_t)sysconf(_SC_PAGESIZE), size, caller);
}

CALLER_ENTRY(pvalloc, pvalloc_entered, 1);
ENTERED void *pvalloc_entered(size_t size, const struct backtrace_caller *caller)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - page) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
    return through_memalign_hook(page, rounded, caller);
}

EXPORTED size_t malloc_usable_size(void *pointer)
{
    return heap_usable_size(pointer);
}
