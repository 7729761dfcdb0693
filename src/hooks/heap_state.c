/* heap_state.c: the hook layer's state, its initialisation, and the stack
 * of each allocation.
 * World: initialisation normal (options, mmap); heap_capture signal-safe.
 *
 * Initialisation happens at the first allocation, which may come from the
 * loader or from another library's constructor before ours ran; while it
 * runs (and on other threads meanwhile) allocations pass through to glibc
 * unrecorded, and are recognised as not ours when freed later. */
#define _GNU_SOURCE
#include "heap.h"
#include "guard_pool.h"
#include "sample.h"
#include "block_set.h"
#include "mtrace.h"
#include "profile_dump.h"
#include "quarantine.h"
#include "stack_counts.h"
#include "../base/environment.h"
#include "execinfo_ex.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define DEPOT_RESERVE ((size_t)1 << 30)   /* address space; committed as used */
/* As many stacks as the depot can hold (an entry takes at least 72 bytes). */
#define COUNTED_STACKS_MAX (DEPOT_RESERVE / 72)


static void before_fork(void)
{
    mtrace_before_fork();
    quarantine_lock();
    guard_pool_lock(); /* a child must not inherit it held */
}

static void after_fork_in_parent(void)
{
    guard_pool_unlock();
    quarantine_unlock();
    mtrace_after_fork();
}

static void after_fork_in_child(void)
{
    guard_pool_unlock();
    quarantine_unlock();
    mtrace_after_fork();
    heap_forget_thread_id(); /* the child's thread has a new id */
    heap_scans_forget();     /* the threads that were walking the heap are not here */
    stack_counts_after_fork_in_child();
    heap_busy++;
    quarantine_after_fork_in_child(); /* the other threads' batches too */
    heap_busy--;
}

static uint32_t make_secret(void)
{
    uint32_t secret;
    if (getrandom(&secret, sizeof secret, GRND_NONBLOCK) == sizeof secret)
        return secret;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint32_t)now.tv_nsec ^ (uint32_t)getpid() << 16;
}

/* This library's code, and the core library's: allocations made from
 * either are the library's own, in no heap profile. */
static void find_own_code(void)
{
    struct dl_find_object object;
    if (_dl_find_object((void *)find_own_code, &object) == 0) {
        heap.own_start = (uintptr_t)object.dlfo_map_start;
        heap.own_end = (uintptr_t)object.dlfo_map_end;
        stack_counts_exclude(heap.own_start, heap.own_end);
    }
    if (_dl_find_object((void *)backtrace_resolve, &object) == 0 &&
        (uintptr_t)object.dlfo_map_start != heap.own_start) {
        heap.core_start = (uintptr_t)object.dlfo_map_start;
        heap.core_end = (uintptr_t)object.dlfo_map_end;
        stack_counts_exclude(heap.core_start, heap.core_end);
    }
}

/* Stacks cut at heap_frames outside the program's code (AT_ENTRY's
 * module) are walked again deeper at their first allocation
 * (stack_counts_look_deeper). */
static void look_deeper_outside_the_program(void)
{
    struct dl_find_object object;
    uintptr_t start = 0, end = 0;
    if (_dl_find_object((void *)getauxval(AT_ENTRY), &object) == 0) {
        start = (uintptr_t)object.dlfo_map_start;
        end = (uintptr_t)object.dlfo_map_end;
    }
    stack_counts_look_deeper(heap.options.heap_frames, start, end, heap_capture_reaches_library);
}

/* Loading the hooks is enough to get crash reports too, unless handler=0.
 * A constructor, not the first malloc: installing builds the index. */
__attribute__((constructor))
static void install_fatal_handler(void)
{
    int saved_errno = errno; /* main starts with errno 0, whatever the load did */
    heap_ready();
    if (heap.options.handler != 0) {
        heap_busy++;
        /* An abort the program inherited as ignored is not reported by
         * the handler (it chains to SIG_IGN): a heap error then cannot
         * wait for the crash report and is written on its own. */
        struct sigaction before, abort_action;
        int abort_ignored = sigaction(SIGABRT, NULL, &before) == 0 && !(before.sa_flags & SA_SIGINFO) &&
                            before.sa_handler == SIG_IGN;
        if (backtrace_install_fatal_handler(NULL) == 0 && !abort_ignored &&
            sigaction(SIGABRT, NULL, &abort_action) == 0 && (abort_action.sa_flags & SA_SIGINFO))
            heap.fatal_handler = abort_action.sa_sigaction;
        /* Added, not set: the program keeps backtrace_set_crash_callback. */
        if (heap.recording || heap.options.sample != 0)
            heap.crash_section_added =
                backtrace_add_crash_callback(heap_crash_section, NULL) == 0 &&
                heap.fatal_handler != NULL;
        if (heap.crash_section_added)
            backtrace_set_crash_lead(heap_crash_lead, NULL);
        heap_busy--;
    }
    profile_dump_start(); /* in front of the dump's handler, installed just now */
    errno = saved_errno;
}

static void initialise(void)
{
    heap.options = *environment_options_quietly(); /* the core library reports a mistake */
    block_layout_init(&heap.layout, heap.options.guard, make_secret());
    find_own_code();
    look_deeper_outside_the_program();
    /* sample=N: recording is off, as with heap=0, but for the samples. */
    int sampling = heap.options.sample != 0;
    int recording = heap.options.heap && !sampling && stack_depot_init(DEPOT_RESERVE) == 0 &&
                    stack_counts_init(COUNTED_STACKS_MAX) == 0 &&
                    quarantine_init(heap.options.quarantine) == 0;
    if (sampling && stack_depot_init(DEPOT_RESERVE) != 0)
        sampling = 0;
    /* Sampling's pool is GWP-ASan's: a few slots (sample_slots), each
     * page touched once and reused, so that a sample costs two mprotect
     * calls and no fresh page or mapping. */
    if ((recording && heap.options.guard_pages != 0) || sampling)
        guard_pool_init(heap.options.guard_pages == 2 ? GUARD_BEFORE : GUARD_AFTER,
                        heap.options.guard_pages_max,
                        sampling ? heap.options.sample_slots : heap.options.guard_pages_budget,
                        sampling);
    if (sampling)
        sample_init(heap.options.sample_seed != 0 ? heap.options.sample_seed
                                                  : (uint64_t)make_secret() << 32 | make_secret());
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    heap.recording = recording;
}

int heap_ready_slow(void)
{
    int phase = atomic_load_explicit(&heap.phase, memory_order_acquire);
    if (phase == HEAP_READY)
        return heap.recording;
    int expected = HEAP_UNINITIALISED;
    if (phase == HEAP_UNINITIALISED &&
        atomic_compare_exchange_strong(&heap.phase, &expected, HEAP_INITIALISING)) {
        int saved_errno = errno; /* a first malloc's success leaves errno as it was */
        heap_busy++;
        initialise();
        heap_busy--;
        errno = saved_errno;
        atomic_store_explicit(&heap.phase, HEAP_READY, memory_order_release);
        return heap.recording;
    }
    return 0; /* another thread is initialising: pass through meanwhile */
}
