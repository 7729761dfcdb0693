/* heap.h: the hook layer's allocator, between the entry points (malloc...,
 * allocator.c) and glibc's allocator (__libc_malloc...). */
#ifndef EXECINFO_EX_HEAP_H
#define EXECINFO_EX_HEAP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "block.h"
#include "../base/options.h"

enum heap_phase { HEAP_UNINITIALISED, HEAP_INITIALISING, HEAP_READY };

struct heap_state {
    _Atomic int phase;
    int recording;                 /* heap=1 and initialised: blocks are ours */
    struct block_layout layout;
    struct options options;
    uintptr_t own_start, own_end;  /* this library's code: not the caller's frames */
    uintptr_t core_start, core_end; /* libexecinfo_ex's, when it is another object */
    /* The fatal handler we installed and our crash section in it: a heap
     * error then goes into the report of the abort that follows. */
    int crash_section_added;
    void (*fatal_handler)(int, siginfo_t *, void *);
};

extern struct heap_state heap;

/* Set while the calling thread is inside the hook layer (or the core
 * library working for it): its allocations pass straight through. */
extern __thread int heap_busy __attribute__((tls_model("initial-exec")));

/* What the allocation entry point running on this thread saw of its
 * caller (allocator.c), or NULL (a user's hook is in between, or no entry
 * point: the library's own calls): a capture then starts at the caller. */
struct backtrace_caller;
extern __thread const struct backtrace_caller *heap_caller __attribute__((tls_model("initial-exec")));

/* Initialise on first use (from whichever allocation comes first, maybe
 * inside the loader or a constructor). Returns 1 when recording is on.
 * Inline for the common case, every call once initialised. */
int heap_ready_slow(void);
static inline int heap_ready(void)
{
    if (__builtin_expect(__atomic_load_n((int *)&heap.phase, __ATOMIC_ACQUIRE) == HEAP_READY, 1))
        return heap.recording;
    return heap_ready_slow();
}

/* The calling thread's kernel id, cached; forgotten in a fork child.
 * Inline: every allocation and free records it. */
extern __thread uint32_t heap_cached_thread_id __attribute__((tls_model("initial-exec")));
uint32_t heap_thread_id_slow(void);
static inline uint32_t heap_thread_id(void)
{
    uint32_t id = heap_cached_thread_id;
    return __builtin_expect(id != 0, 1) ? id : heap_thread_id_slow();
}
void heap_forget_thread_id(void);

/* The stack of the calling code (frames of this library skipped), with the
 * thread, as a depot id; 0 if it could not be stored. Signal-safe. */
enum heap_capture_kind {
    HEAP_CAPTURE_ALLOCATION,
    HEAP_CAPTURE_FREE,
    HEAP_CAPTURE_REPORT,      /* no memo: a report may come from anywhere */
};
stack_id heap_capture(enum heap_capture_kind kind);

/* Whether the calling code's stack, walked past where a capture stops,
 * has a frame in the library's own code (stack_counts_look_deeper).
 * Signal-safe. */
int heap_capture_reaches_library(void);

/* The calling thread's memo for mtrace's stack lines, or NULL. */
struct backtrace_memo *heap_trace_memo(void);

/* A stack id as frames: *THREAD gets the thread, FRAMES the addresses.
 * Returns the frame count. Signal-safe. */
int heap_stack_frames(stack_id id, uint32_t *thread, void **frames, int capacity);

/* The defaults behind the hook pointers and the entry points. ALIGNMENT is
 * a power of two >= 16. Errors as glibc's: NULL with errno ENOMEM. */
void *heap_allocate(size_t size, size_t alignment);
/* calloc's default: SIZE zeroed bytes, without writing pages that are
 * zero already (glibc's calloc with heap=0; a fresh mmapped chunk). */
void *heap_allocate_zeroed(size_t size);
void heap_release(void *pointer);
void *heap_reallocate(void *pointer, size_t size);
size_t heap_usable_size(void *pointer);

/* The guards of the block at USER, and for a freed one its fill: each
 * damage reported (heap_report_error), FOUND saying when ("at free"...).
 * World: normal. */
void heap_check_block(uintptr_t user, const struct block_facts *facts, stack_id free_stack,
                      const char *found);

/* The unlocked walks over the blocks (backtrace_heap_describe,
 * backtrace_heap_check, the crash report's heap section) say they are
 * running, so that an evicted block is not handed back to the C library
 * meanwhile: glibc could unmap it under the walk (a fault in the crash
 * handler) or reuse it (a block reported damaged that never was). Found
 * by make stress. Begin and end: signal-safe (atomics); waiting: normal
 * world, at eviction, as long as a walk takes (milliseconds for a large
 * heap), bounded. */
void heap_scan_begin(void);
void heap_scan_end(void);
int heap_scans_running(void);
void heap_scans_forget(void);        /* in a fork child: those walks are gone */
/* 1 when none runs; 0 after about 2 s, and then at once until none runs. */
int heap_wait_for_scans(void);

/* The heap's part of a crash report: the fatal handler's crash callback
 * (set by heap_state.c; a program that sets its own replaces it).
 * Signal-safe. */
/* The crash report's lead: a heap error held for its abort first, that
 * abort's trace left out (heap_inspect.c). Signal-safe. */
int heap_crash_lead(int fd, int format, int signo, const void *siginfo, const void *ucontext,
                    void *context);
void heap_crash_section(int fd, int format, int signo, const void *siginfo,
                        const void *ucontext, void *context);

/* glibc's own allocator, which the hook layer forwards to. */
void *__libc_malloc(size_t size);
void __libc_free(void *pointer);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void *__libc_calloc(size_t count, size_t size);

#endif
