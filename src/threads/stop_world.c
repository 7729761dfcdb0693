/* stop_world.c: backtrace_with_threads_stopped, the every-thread gathering
 * offered to a caller that must read the other threads' memory while they
 * stand still (the hooks library's leak check): stop them, hand their
 * registers, stack pointers and thread pointers to a callback, release.
 * World: signal-safe (thread_gather, mmap).
 *
 * The facts the callback sees are a public copy of the gathering's, in a
 * mapping of their own: the gathering's layout stays private. */
#define _GNU_SOURCE
#include "thread_gather.h"
#include "thread_arch.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <sys/mman.h>

static void describe(struct backtrace_stopped_thread *out, const struct thread_facts *facts)
{
    out->tid = facts->tid;
    out->stopped = facts->outcome == THREAD_READ && facts->have_context;
    out->why = out->stopped ? NULL : thread_outcome_words(facts->outcome);
    out->ucontext = out->stopped ? &facts->context : NULL;
    out->stack_pointer = out->stopped ? thread_arch_stack_pointer(&facts->context)
                         : facts->have_syscall ? facts->syscall_sp : 0;
    out->thread_pointer = out->stopped ? facts->thread_pointer : 0;
}

/* The stopped threads as the callback sees them, the exited left out. */
static int call_back(const struct thread_set *set, backtrace_stopped_callback *callback,
                     void *context, int *result)
{
    size_t bytes = ((size_t)set->count + 1) * sizeof(struct backtrace_stopped_thread);
    struct backtrace_stopped_thread *threads = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (threads == MAP_FAILED)
        return -ENOMEM;
    int count = 0;
    for (int i = 0; i < set->count; i++)
        if (set->threads[i].outcome != THREAD_EXITED)
            describe(&threads[count++], &set->threads[i]);
    *result = callback(threads, count, context);
    munmap(threads, bytes);
    return 0;
}

__attribute__((visibility("default")))
int backtrace_with_threads_stopped(int timeout_ms, backtrace_stopped_callback *callback,
                                   void *context)
{
    if (callback == NULL || timeout_ms < 1 || timeout_ms > 60000) {
        errno = EINVAL;
        return -1;
    }
    /* Every thread, and one frame each: the callback reads memory, not
     * traces; patient: a thread that blocks the signal for a moment is
     * waited for, up to the deadline. */
    struct gather_settings settings = { THREADS_CAP_MAX, timeout_ms, 1, 1 };
    struct thread_set set;
    int result = 0;
    int error = thread_gather(&set, &settings);
    if (error >= 0)
        error = call_back(&set, callback, context, &result);
    thread_gather_release(&set);
    if (error < 0) {
        errno = -error;
        return -1;
    }
    return result;
}
