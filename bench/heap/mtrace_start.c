/* mtrace_start.c: build/bench/heap/mtrace_start.so, the glibc mtrace
 * contender's switch (bench/heap/heap_bench.c). glibc traces allocations
 * only after the program calls mtrace(), which neither churn.c nor CPython
 * does, so this object, preloaded after libc_malloc_debug.so.0, calls it
 * from a constructor:
 *   LD_PRELOAD="libc_malloc_debug.so.0 mtrace_start.so" MALLOC_TRACE=FILE program
 * The preloaded libc_malloc_debug.so.0 comes first in the lookup order, so
 * this mtrace() is its working one, not libc.so.6's stub. */
#include <mcheck.h>

__attribute__((constructor)) static void start(void)
{
    mtrace();
}
