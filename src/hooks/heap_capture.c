/* heap_capture.c: the hook layer's state, the thread id, and a depot id
 * read back as frames. World: signal-safe (the depot, a cached gettid).
 * Capturing a stack is thread_capture.c's. */
#define _GNU_SOURCE
#include "heap.h"
#include "../base/load_touched.h"
#include "execinfo_ex.h"

#include <unistd.h>

/* The hook layer's state lives here, with the signal-safe code that reads
 * it; heap_state.c initialises it. */
LOAD_TOUCHED struct heap_state heap;
__thread int heap_busy __attribute__((tls_model("initial-exec")));
__thread const struct backtrace_caller *heap_caller __attribute__((tls_model("initial-exec")));

__thread uint32_t heap_cached_thread_id __attribute__((tls_model("initial-exec")));

void heap_forget_thread_id(void)
{
    heap_cached_thread_id = 0;
}

uint32_t heap_thread_id_slow(void)
{
    heap_cached_thread_id = (uint32_t)gettid();
    return heap_cached_thread_id;
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
