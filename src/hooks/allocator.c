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
#include "execinfo_ex.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORTED __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

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

/* glibc's memalign: a non-power-of-two alignment is rounded up. */
static void *default_memalign(size_t alignment, size_t size, const void *caller)
{
    (void)caller;
    if (alignment > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    size_t rounded = 16;
    while (rounded < alignment)
        rounded <<= 1;
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

EXPORTED void *malloc(size_t size)
{
    void *(*hook)(size_t, const void *) = __malloc_hook;
    void *pointer = hook != NULL ? hook(size, CALLER) : default_malloc(size, CALLER);
    mtrace_allocation(CALLER, pointer, size);
    return pointer;
}

EXPORTED void free(void *pointer)
{
    void (*hook)(void *, const void *) = __free_hook;
    mtrace_release(CALLER, pointer);
    if (hook != NULL)
        hook(pointer, CALLER);
    else
        default_free(pointer, CALLER);
}

EXPORTED void *calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    /* Bionic's rule: a hook, then zeroing. The default knows which pages
     * are zero already (a 2 GiB calloc touched once stays unresident). */
    void *(*hook)(size_t, const void *) = __malloc_hook;
    void *pointer;
    if (hook != NULL && hook != default_malloc) {
        pointer = hook(total, CALLER);
        if (pointer != NULL)
            memset(pointer, 0, total);
    } else {
        pointer = heap_allocate_zeroed(total);
    }
    mtrace_allocation(CALLER, pointer, total);
    return pointer;
}

/* The trace's lock is held across the default realloc (mtrace.c says
 * why), never across a user's hook, which runs code of its own. */
static void *traced_realloc(void *pointer, size_t size, const void *caller)
{
    void *(*hook)(void *, size_t, const void *) = __realloc_hook;
    if (hook != NULL) {
        void *moved = hook(pointer, size, caller);
        mtrace_reallocation(caller, pointer, moved, size);
        return moved;
    }
    int traced = mtrace_realloc_begin();
    void *moved = default_realloc(pointer, size, caller);
    if (traced)
        mtrace_realloc_end(caller, pointer, moved, size);
    return moved;
}

EXPORTED void *realloc(void *pointer, size_t size)
{
    return traced_realloc(pointer, size, CALLER);
}

EXPORTED void *reallocarray(void *pointer, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return traced_realloc(pointer, total, CALLER);
}

static void *through_memalign_hook(size_t alignment, size_t size, const void *caller)
{
    void *(*hook)(size_t, size_t, const void *) = __memalign_hook;
    void *pointer = hook != NULL ? hook(alignment, size, caller)
                                 : default_memalign(alignment, size, caller);
    mtrace_allocation(caller, pointer, size);
    return pointer;
}

EXPORTED void *memalign(size_t alignment, size_t size)
{
    return through_memalign_hook(alignment, size, CALLER);
}

EXPORTED int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!is_power_of_two(alignment) || alignment % sizeof(void *) != 0)
        return EINVAL;
    int saved_errno = errno;
    void *pointer = through_memalign_hook(alignment, size, CALLER);
    errno = saved_errno; /* posix_memalign reports through its result only */
    if (pointer == NULL)
        return ENOMEM;
    *out = pointer;
    return 0;
}

EXPORTED void *aligned_alloc(size_t alignment, size_t size)
{
    if (!is_power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return through_memalign_hook(alignment, size, CALLER);
}

EXPORTED void *valloc(size_t size)
{
    return through_memalign_hook((size_t)sysconf(_SC_PAGESIZE), size, CALLER);
}

EXPORTED void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - page) {
        errno = ENOMEM;
        return NULL;
    }
    size_t rounded = size == 0 ? page : (size + page - 1) & ~(page - 1);
    return through_memalign_hook(page, rounded, CALLER);
}

EXPORTED size_t malloc_usable_size(void *pointer)
{
    return heap_usable_size(pointer);
}
