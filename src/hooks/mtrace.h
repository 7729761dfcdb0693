/* mtrace.h: the trace of mtrace() (docs/MTRACE.md), fed by the entry
 * points of allocator.c after each call. World: normal. */
#ifndef EXECINFO_EX_MTRACE_H
#define EXECINFO_EX_MTRACE_H

#include <stdatomic.h>
#include <stddef.h>

/* 1 while mtrace() traces: read inline by every entry point, so that
 * with no tracing a call costs one load. */
extern atomic_int mtrace_tracing;

void mtrace_allocation_traced(const void *caller, const void *pointer, size_t size);
void mtrace_release_traced(const void *caller, const void *pointer);
int mtrace_realloc_begin_traced(void);

/* CALLER: the return address into the program's code. Each does nothing
 * unless mtrace() is on, and nothing for the library's own calls. A
 * release is traced before the block is given back, an allocation after. */
static inline void mtrace_allocation(const void *caller, const void *pointer, size_t size)
{
    if (__builtin_expect(atomic_load_explicit(&mtrace_tracing, memory_order_relaxed), 0))
        mtrace_allocation_traced(caller, pointer, size);
}

static inline void mtrace_release(const void *caller, const void *pointer)
{
    if (__builtin_expect(atomic_load_explicit(&mtrace_tracing, memory_order_relaxed), 0))
        mtrace_release_traced(caller, pointer);
}
/* Around a realloc: begin returns 1 when it is traced (the trace's lock
 * is then held: call end, with what realloc(OLD, SIZE) returned in FRESH,
 * NULL when it failed or freed for SIZE 0). */
static inline int mtrace_realloc_begin(void)
{
    return atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) &&
           mtrace_realloc_begin_traced();
}
void mtrace_realloc_end(const void *caller, const void *old, const void *fresh, size_t size);

/* A realloc made through a user's hook, traced after it returned. */
void mtrace_reallocation_traced(const void *caller, const void *old, const void *fresh,
                                size_t size);
static inline void mtrace_reallocation(const void *caller, const void *old, const void *fresh,
                                       size_t size)
{
    if (__builtin_expect(atomic_load_explicit(&mtrace_tracing, memory_order_relaxed), 0))
        mtrace_reallocation_traced(caller, old, fresh, size);
}

/* Write what is buffered now, unless the lock is busy (before an abort). */
void mtrace_flush_now(void);

/* fork: hold the trace's lock across it, its buffer flushed. */
void mtrace_before_fork(void);
void mtrace_after_fork(void);

#endif
