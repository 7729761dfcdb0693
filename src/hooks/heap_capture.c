/* heap_capture.c: the stack and thread of an allocation, as a depot id.
 * World: signal-safe (the core library's AS-Safe walker, the depot, a
 * cached gettid). */
#define _GNU_SOURCE
#include "heap.h"
#include "execinfo_ex.h"

#include <unistd.h>

/* The hook layer's state lives here, with the signal-safe code that reads
 * it; heap_state.c initialises it. */
struct heap_state heap;
__thread int heap_busy __attribute__((tls_model("initial-exec")));

static __thread uint32_t cached_thread_id __attribute__((tls_model("initial-exec")));
/* The last capture's frames, so that the next one only unwinds what
 * changed. Used under heap_busy == 0 only (heap.c), so never by two
 * captures at once: a signal handler's malloc in the middle of one is
 * recorded without a stack. Initial-exec TLS: the hook layer is loaded
 * with the program (preloaded or linked), never by dlopen. */
static __thread struct backtrace_memo capture_memo __attribute__((tls_model("initial-exec")));

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

/* The depot entry: the thread first, then the frames, from the first one
 * outside this library (the caller of malloc). */
stack_id heap_capture(void)
{
    void *frames[STACK_DEPOT_MAX_FRAMES + 1];
    int count = backtrace_skip_range(frames + 1, heap.options.heap_frames,
                                     (const void *)heap.own_start, (const void *)heap.own_end,
                                     &capture_memo);
    frames[0] = (void *)(uintptr_t)heap_thread_id();
    return stack_depot_put(frames, count + 1);
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
