/* leak.h: the leak check by reachability, as LeakSanitizer does it
 * (docs/HEAP_REPORT.md): with every thread stopped, the blocks a root
 * reaches through pointers are reachable; the others leaked, directly
 * when no other leaked block points at them, indirectly when one does.
 *
 * Three parts: leak_scan.c marks (signal-safe: it runs with the world
 * stopped), leak_check.c gathers the roots and groups the leaks (normal
 * world), leak_report.c renders the facts as text or JSON. */
#ifndef EXECINFO_EX_LEAK_H
#define EXECINFO_EX_LEAK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leak_suppress.h"
#include "stack_depot.h"

/* LSan's tags. UNREACHED at the end is a direct leak. */
enum leak_tag { LEAK_UNREACHED, LEAK_REACHABLE, LEAK_IGNORED, LEAK_INDIRECT };

/* One live block, as the snapshot taken with the world stopped saw it. */
struct leak_block {
    uintptr_t user;
    uint64_t size;
    stack_id stack;
    uint8_t tag;
    uint8_t ignored;               /* backtrace_heap_ignore'd */
};

struct leak_range {
    uintptr_t low, high;
};

/* Threads that could not be stopped, named in the report. */
#define LEAK_UNSTOPPED_NAMED 8

/* What the scan needs and finds. The arrays are mmap'd by the caller
 * before the world stops (the scan may not allocate). */
struct leak_scan {
    /* in: every module's writable segments but this library's */
    const struct leak_range *globals;
    size_t global_count;
    /* in: the loader's code: a block it allocated is reachable */
    const struct leak_range *loader;
    size_t loader_count;
    size_t static_tls_size;        /* glibc's static TLS block, TCB included */
    /* in: the calling thread, from its caller's frame up; its registers
     * are in that frame (saved there before the call) */
    uintptr_t self_stack_pointer;
    uintptr_t self_thread_pointer;
    /* memory */
    struct leak_block *blocks;     /* by address */
    uintptr_t *addresses;          /* blocks[i].user alone: the search's dense copy */
    size_t block_count, block_capacity;
    uintptr_t heap_low, heap_high; /* no block outside */
    uint32_t *frontier;            /* block_capacity entries */
    struct leak_range *readable;   /* /proc/self/maps, readable mappings */
    size_t readable_count, readable_capacity;
    /* out */
    int threads_seen;              /* the caller's included */
    int threads_unstopped;
    pid_t unstopped[LEAK_UNSTOPPED_NAMED];
    const char *unstopped_why[LEAK_UNSTOPPED_NAMED];
    int unstopped_unscanned;       /* of them, how many had no stack to scan */
    int blocks_missed;             /* more blocks than room: 1 */
};

/* The whole check with the world stopped, from the callback of
 * backtrace_with_threads_stopped (a backtrace_stopped_callback). Returns
 * 0. World: signal-safe. */
struct backtrace_stopped_thread;
int leak_scan_stopped(const struct backtrace_stopped_thread *threads, int count, void *scan);

/* The leaks of one allocation stack and kind. */
struct leak_group {
    stack_id stack;
    int direct;
    uint64_t bytes, objects;
};

/* One check's facts: what both renderers say. */
struct leak_facts {
    const struct leak_group *groups; /* direct first, then by bytes, largest first */
    size_t group_count;
    uint64_t bytes, objects;         /* the summary */
    const struct leak_scan *scan;    /* the threads left as they were */
    const struct leak_suppressions *suppressions; /* their counts: what they kept out */
    const char *suppressions_path;   /* suppressions=, for an error about it */
};

/* The check at exit (leak_check=1), to stderr or report=, from the
 * destructor of exit_check.c: the caller's frame holds the caller's
 * registers (getcontext) at SELF_STACK_POINTER. Returns the leaked
 * blocks, or a negative errno. World: normal. */
long leak_check_at_exit(uintptr_t self_stack_pointer);

/* The two renderers (docs/HEAP_REPORT.md). Signal-safe. */
void leak_report_text(int fd, const struct leak_facts *facts);
void leak_report_json(int fd, const struct leak_facts *facts);

#endif
