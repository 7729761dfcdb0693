/* exit_check.c: the heap checked once more when the process exits
 * normally (exit, or a return from main): the guards of every block and
 * the fill of every freed one still in the quarantine, each damage
 * reported as at eviction ("found at exit"; exit_check=0 turns it off);
 * then the leak check (leak_check=1, leak_check.c); then the exit status
 * that leak_exitcode= and error_exitcode= ask for.
 * World: normal (a destructor; its reports capture stacks).
 *
 * Without it, a write after free or an overflow of a block that is never
 * freed is found only at free or at eviction: a program that exits before
 * the quarantine's bound of frees went clean. */
#define _GNU_SOURCE
#include "heap.h"
#include "heap_report.h"
#include "block_set.h"
#include "leak.h"
#include "quarantine.h"

#include <stdio.h>
#include <ucontext.h>
#include <unistd.h>

static int check_at_exit(uintptr_t block, void *context)
{
    (void)context;
    struct block_facts facts;
    /* Being freed or handed out by a thread that still runs: skipped, as
     * the other unlocked walks do. */
    if (!block_read(&heap.layout, block, &facts) || facts.state == BLOCK_FREEING)
        return 0;
    struct quarantined freed = { 0 };
    if (facts.state == BLOCK_FREED)
        quarantine_find(block, &freed);
    heap_check_block(block, &facts, freed.free_stack, "at exit");
    return 0;
}

static void check_guards(void)
{
    heap_busy++;
    heap_scan_begin(); /* evictions meanwhile keep their blocks from glibc */
    block_set_each(check_at_exit, NULL);
    heap_scan_end();
    heap_busy--;
}

/* The status the options ask for, or -1: the program's own. */
static int exit_status(long leaked)
{
    if (leaked > 0 && heap.options.leak_exitcode >= 0)
        return heap.options.leak_exitcode;
    if (heap.options.error_exitcode >= 0 && (leaked > 0 || heap_errors_reported > 0))
        return heap.options.error_exitcode;
    return -1;
}

/* After the program's atexit handlers and the destructors of the modules
 * loaded after ours (theirs run first); the core library's fatal handler,
 * a dependency, is still there for an abort. A status of ours ends the
 * process here, stdio flushed first (the destructors that would have run
 * after this one do not: as LSan's exit). */
__attribute__((destructor, noinline))
static void check_heap_at_exit(void)
{
    if (!heap.recording)
        return;
    if (heap.options.exit_check)
        check_guards();
    long leaked = 0;
    if (heap.options.leak_check) {
        ucontext_t registers; /* the caller's, where the leak check's scan of this stack starts */
        getcontext(&registers);
        leaked = leak_check_at_exit((uintptr_t)&registers);
    }
    int status = exit_status(leaked);
    if (status >= 0) {
        fflush(NULL);
        _exit(status);
    }
}
