/* heap_capture.c: the stack and thread of an allocation, as a depot id.
 * World: signal-safe (the core library's AS-Safe walker, the depot, a
 * cached gettid). */
#define _GNU_SOURCE
#include "heap.h"
#include "execinfo_ex.h"

#include <string.h>
#include <unistd.h>

/* The hook layer's state lives here, with the signal-safe code that reads
 * it; heap_state.c initialises it. */
struct heap_state heap;
__thread int heap_busy __attribute__((tls_model("initial-exec")));

static __thread uint32_t cached_thread_id __attribute__((tls_model("initial-exec")));
/* The last capture's frames, so that the next one only unwinds what
 * changed: one memo for allocations and one for frees, whose paths
 * through this library differ. Used under heap_busy == 0 only (heap.c),
 * so never by two captures at once: a signal handler's malloc in the
 * middle of one is recorded without a stack. Initial-exec TLS: the hook
 * layer is loaded with the program (preloaded or linked), never by
 * dlopen. */
static __thread struct backtrace_memo capture_memos[2] __attribute__((tls_model("initial-exec")));

void heap_forget_thread_id(void)
{
    cached_thread_id = 0;
}

uint32_t heap_thread_id(void)
{
    if (cached_thread_id == 0)
        cached_thread_id = (uint32_t)gettid();
    return cached_thread_id;
}

/* The stacks this thread stored last. A program allocates in loops, so
 * the stack of a capture is often one of the last few: found here, it
 * needs neither the depot's hash nor its table and entries, which are
 * cold memory in a big program. Same rule as the memo: one capture at a
 * time per thread. */
#define RECENT_STACKS 8
#define RECENT_MAX_WORDS 18        /* the thread and 17 frames */

struct recent_stack {
    stack_id id;
    int count;
    void *words[RECENT_MAX_WORDS];
};

static __thread struct recent_stack recent[RECENT_STACKS] __attribute__((tls_model("initial-exec")));
static __thread unsigned recent_next __attribute__((tls_model("initial-exec")));

static stack_id put_through_recent(void **words, int count)
{
    if (count > RECENT_MAX_WORDS)
        return stack_depot_put(words, count);
    for (int i = 0; i < RECENT_STACKS; i++) {
        const struct recent_stack *r = &recent[i];
        /* words[1], the caller of malloc, tells most stacks apart at once. */
        if (r->count == count && r->id != 0 && r->words[1] == words[1] &&
            memcmp(r->words, words, (size_t)count * sizeof *words) == 0)
            return r->id;
    }
    stack_id id = stack_depot_put(words, count);
    if (id != 0) {
        struct recent_stack *r = &recent[recent_next++ % RECENT_STACKS];
        r->id = id;
        r->count = count;
        memcpy(r->words, words, (size_t)count * sizeof *words);
    }
    return id;
}

/* The depot entry: the thread first, then the frames, from the first one
 * outside this library (the caller of malloc). */
stack_id heap_capture(enum heap_capture_kind kind)
{
    struct backtrace_memo *memo = kind == HEAP_CAPTURE_REPORT ? NULL : &capture_memos[kind];
    void *words[STACK_DEPOT_MAX_FRAMES + 1];
    int count = backtrace_skip_range(words + 1, heap.options.heap_frames,
                                     (const void *)heap.own_start, (const void *)heap.own_end,
                                     memo);
    words[0] = (void *)(uintptr_t)heap_thread_id();
    return put_through_recent(words, count + 1);
}

int heap_stack_frames(stack_id id, uint32_t *thread, void **frames, int capacity)
{
    void *entry[STACK_DEPOT_MAX_FRAMES];
    int count = stack_depot_get(id, entry, STACK_DEPOT_MAX_FRAMES);
    if (count <= 0) {
        *thread = 0;
        return 0;
    }
    *thread = (uint32_t)(uintptr_t)entry[0];
    int n = count - 1 < capacity ? count - 1 : capacity;
    for (int i = 0; i < n; i++)
        frames[i] = entry[1 + i];
    return n;
}
