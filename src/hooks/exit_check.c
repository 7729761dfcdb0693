/* exit_check.c: the heap checked once more when the process exits
 * normally (exit, or a return from main): the guards of every block and
 * the fill of every freed one still in the quarantine, each damage
 * reported as at eviction ("found at exit"). exit_check=0 turns it off.
 * World: normal (a destructor; its reports capture stacks).
 *
 * Without it, a write after free or an overflow of a block that is never
 * freed is found only at free or at eviction: a program that exits before
 * the quarantine's bound of frees went clean. */
#define _GNU_SOURCE
#include "heap.h"
#include "block_set.h"
#include "quarantine.h"

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

/* After the program's atexit handlers and the destructors of the modules
 * loaded after ours (theirs run first); the core library's fatal handler,
 * a dependency, is still there for an abort. */
__attribute__((destructor))
static void check_heap_at_exit(void)
{
    if (!heap.recording || !heap.options.exit_check)
        return;
    heap_busy++;
    heap_scan_begin(); /* evictions meanwhile keep their blocks from glibc */
    block_set_each(check_at_exit, NULL);
    heap_scan_end();
    heap_busy--;
}
