/* mtrace_at_load.c: execinfo_ex/mtrace_at_load.so, preloaded by
 * `execinfo_ex_heap --leaks=FILE` after libexecinfo_ex_hooks.so: it calls
 * the hook layer's mtrace() when it loads, so that a program that never
 * calls mtrace() is traced from its start to its exit (the layer flushes
 * the trace at exit) into MALLOC_TRACE, which the command sets.
 * World: normal (a constructor).
 *
 * It is linked to libexecinfo_ex_hooks.so, so that the layer's constructor
 * has run first, and its mtrace is the one called (the layer, preloaded
 * first, is first in the symbol search order). A program's own mtrace()
 * then changes nothing; its muntrace() ends the trace there. */
#include <mcheck.h>

__attribute__((constructor)) static void trace_from_load(void)
{
    mtrace();
}
