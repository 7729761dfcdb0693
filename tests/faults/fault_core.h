/* fault_core.h: the allocation-failure injector of the sweep (tests/faults).
 *
 * A countdown over the allocations made while armed: fault_arm(N) makes
 * the Nth allocation from now fail (NULL, errno ENOMEM), once; N == 0
 * only counts. A live counter follows every block handed out and given
 * back, from the start of the process, so that a test can compare the
 * number of live blocks before an operation and after its cleanup.
 *
 * The including file provides the allocator entry points (malloc... in
 * the program or in a preloaded shim, or glibc's __libc_malloc... below
 * the hooks library) and calls fault_take() on each allocation attempt
 * and fault_count_live(+1/-1) on each block that lives or dies. */
#ifndef EXECINFO_EX_FAULT_CORE_H
#define EXECINFO_EX_FAULT_CORE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef FAULT_WITH_BACKTRACE
#include "execinfo_ex.h"
#endif

static atomic_int fault_armed;
static atomic_long fault_fail_at;   /* 0: count only */
static atomic_long fault_counted;   /* allocations seen since fault_arm */
static atomic_int fault_fired;      /* the failure was injected */
static atomic_long fault_live;      /* blocks live, process-wide */

/* Write "fault: ... MODULE+0xOFFSET" for the code at ADDRESS, without
 * malloc (it runs inside the allocator). */
static void fault_note_where(const char *what, const void *address)
{
    struct dl_find_object object;
    char text[600];
    const char *path = "?";
    uintptr_t offset = (uintptr_t)address;
    if (_dl_find_object((void *)address, &object) == 0 && object.dlfo_link_map != NULL) {
        path = object.dlfo_link_map->l_name[0] ? object.dlfo_link_map->l_name : "(program)";
        offset -= object.dlfo_link_map->l_addr;
    }
    int length = snprintf(text, sizeof text, "fault: %s %s+0x%lx\n", what, path,
                          (unsigned long)offset);
    if (length > 0 && write(2, text, (size_t)length) < 0)
        return;
}

static int fault_in_module(const void *address, const char *name)
{
    struct dl_find_object object;
    return _dl_find_object((void *)address, &object) == 0 && object.dlfo_link_map != NULL &&
           strstr(object.dlfo_link_map->l_name, name) != NULL;
}

/* Code that allocates for whoever called it: libc (tsearch, strdup,
 * fopen...), and libelf, which both libdw and the index builder call. */
__attribute__((unused)) static int fault_in_helper_library(const void *address)
{
    return fault_in_module(address, "/libc.so") || fault_in_module(address, "/libelf.so");
}

/* Who asked for the allocation that returns to CALLER: CALLER, or, when
 * that is a helper library (above), the first frame above it outside
 * them: an elf_begin failing for libdw is libdw's, for the index builder
 * ours (with FAULT_WITH_BACKTRACE: the program has execinfo_ex's
 * signal-safe backtrace, which does not allocate; with
 * FAULT_WITH_GLIBC_BACKTRACE: glibc's, loaded before the countdown is
 * armed, which then does not allocate either). */
static const void *fault_requester(const void *caller)
{
#if defined(FAULT_WITH_BACKTRACE) || defined(FAULT_WITH_GLIBC_BACKTRACE)
    if (fault_in_helper_library(caller)) {
        void *trace[32];
#ifdef FAULT_WITH_BACKTRACE
        int count = backtrace_skip(trace, 32, 0), i = 0;
#else
        int count = backtrace(trace, 32), i = 0;
#endif
        while (i < count && trace[i] != caller)
            i++;
        for (; i < count; i++)
            if (!fault_in_helper_library((char *)trace[i] - 1))
                return trace[i];
    }
#endif
    return caller;
}

/* 1 when this allocation attempt, by the code that returns to CALLER,
 * must fail. */
static inline int fault_take(const void *caller)
{
    if (!atomic_load_explicit(&fault_armed, memory_order_relaxed))
        return 0;
    long number = atomic_fetch_add(&fault_counted, 1) + 1;
    if (number == atomic_load(&fault_fail_at)) {
        atomic_store(&fault_fired, 1);
        fault_note_where("failed the allocation of", (const char *)fault_requester(caller) - 1);
        return 1;
    }
    return 0;
}

static inline void fault_count_live(long change)
{
    atomic_fetch_add_explicit(&fault_live, change, memory_order_relaxed);
}

static inline void fault_arm(long fail_at)
{
    atomic_store(&fault_counted, 0);
    atomic_store(&fault_fired, 0);
    atomic_store(&fault_fail_at, fail_at);
    atomic_store(&fault_armed, 1);
}

/* Returns how many allocations were made while armed. */
static inline long fault_disarm(void)
{
    atomic_store(&fault_armed, 0);
    return atomic_load(&fault_counted);
}

static inline long fault_live_now(void)
{
    return atomic_load(&fault_live);
}

/* The program's allocator, replaced over glibc's (__libc_malloc...): for a
 * program that is not under the hooks library. Define FAULT_REPLACE_MALLOC
 * before including this file, once per program. */
#ifdef FAULT_REPLACE_MALLOC
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void __libc_free(void *pointer);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);

#define FAULT_EXPORT __attribute__((visibility("default")))

#define FAULT_CALLER __builtin_return_address(0)

static void *fault_malloc(size_t size, const void *caller)
{
    if (fault_take(caller)) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = __libc_malloc(size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

FAULT_EXPORT void *malloc(size_t size)
{
    return fault_malloc(size, FAULT_CALLER);
}

FAULT_EXPORT void free(void *pointer)
{
    if (pointer == NULL)
        return;
    fault_count_live(-1);
    __libc_free(pointer);
}

FAULT_EXPORT void *calloc(size_t count, size_t size)
{
    if (fault_take(FAULT_CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = __libc_calloc(count, size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

static void *fault_realloc(void *pointer, size_t size, const void *caller)
{
    if (pointer == NULL)
        return fault_malloc(size, caller);
    if (size == 0) {
        free(pointer);
        return NULL;
    }
    if (fault_take(caller)) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(pointer, size);
}

FAULT_EXPORT void *realloc(void *pointer, size_t size)
{
    return fault_realloc(pointer, size, FAULT_CALLER);
}

FAULT_EXPORT void *reallocarray(void *pointer, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return fault_realloc(pointer, total, FAULT_CALLER);
}

static void *fault_aligned(size_t alignment, size_t size, const void *caller)
{
    if (fault_take(caller)) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = __libc_memalign(alignment, size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

FAULT_EXPORT void *memalign(size_t alignment, size_t size)
{
    return fault_aligned(alignment, size, FAULT_CALLER);
}

FAULT_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    return fault_aligned(alignment, size, FAULT_CALLER);
}

FAULT_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0)
        return EINVAL;
    int saved = errno;
    void *pointer = fault_aligned(alignment, size, FAULT_CALLER);
    errno = saved;
    if (pointer == NULL)
        return ENOMEM;
    *out = pointer;
    return 0;
}

FAULT_EXPORT void *valloc(size_t size)
{
    return fault_aligned((size_t)sysconf(_SC_PAGESIZE), size, FAULT_CALLER);
}

FAULT_EXPORT void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - page) {
        errno = ENOMEM;
        return NULL;
    }
    return fault_aligned(page, size == 0 ? page : (size + page - 1) & ~(page - 1),
                         FAULT_CALLER);
}
#endif /* FAULT_REPLACE_MALLOC */

#endif
