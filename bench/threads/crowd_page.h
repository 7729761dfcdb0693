/* crowd_page.h: the page that bench/threads/crash_latency.c shares with
 * its helper, crash_latency_helper (issue 23's every-thread report).
 *
 * A MAP_SHARED mapping of a memfd made before fork: the child inherits the
 * descriptor across exec (argv[1] is its number) and maps it too, so what
 * it stores there is readable after it has died by its signal. Times are
 * CLOCK_MONOTONIC in ns (timing.h's now_ns), one clock for all processes.
 * `ready` is also a futex word (shared, not private) that the helper wakes
 * when every thread is in its wait. */
#ifndef BENCH_CROWD_PAGE_H
#define BENCH_CROWD_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

struct crowd_page {
    uint32_t ready;          /* futex: 1 once all threads wait, -1 on failure */
    int status;              /* the helper's setup: 0 when it went right */
    uint64_t ready_ns;       /* every thread waiting */
    uint64_t fault_ns;       /* t0: just before the faulting write */
    uint64_t callback_ns;    /* t1: first thing in the crash callback */
    int callback_calls;
};

static inline struct crowd_page *crowd_page_map(int fd)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return page == MAP_FAILED ? NULL : page;
}

#endif
