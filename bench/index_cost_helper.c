/* index_cost_helper.c: what the symbol index costs, seen from inside.
 *
 * Linked with the static build/libexecinfo_ex.a, so that the library's
 * hidden internal functions are reachable (the shared library exports
 * the public API only). Prints one line for bench/index_cost.c:
 *     load_ns=N rebuild_ns=N modules=N symbols=N lines=N mapped_bytes=N
 *
 * load_ns: the library builds its index in a constructor, before main.
 * This program's priority-101 constructor runs before that one (the
 * executable's .init_array is sorted by priority), so the time from it to
 * main is the cold build: every file read, every table made.
 * rebuild_ns: index_build_now() afterwards, median of repeats. Module data
 * is cached by file identity, so this is the cost of a rebuild after a
 * dlopen of something else: module list, stat of each file, a snapshot.
 * EXECINFO_EX_OPTIONS is read at the first build, so each option set is
 * measured in its own process. */
#include "timing.h"

#include <stdio.h>

struct index_statistics {
    size_t modules, symbols, lines, mapped_bytes;
};
void index_statistics(struct index_statistics *out);
int index_build_now(void);

#define REBUILDS 21

static uint64_t started;
static int built_before_us;

__attribute__((constructor(101))) static void before_the_library(void)
{
    struct index_statistics statistics;
    index_statistics(&statistics);
    built_before_us = statistics.modules != 0;
    started = now_ns();
}

int main(void)
{
    uint64_t load_ns = now_ns() - started;
    struct index_statistics statistics;
    double rebuild[REBUILDS];

    index_statistics(&statistics);
    if (built_before_us || statistics.modules == 0) {
        fprintf(stderr, "the index was not built between our constructor and main\n");
        return 1;
    }
    for (int i = 0; i < REBUILDS; i++) {
        uint64_t start = now_ns();
        if (index_build_now() != 0)
            return 2;
        rebuild[i] = (double)(now_ns() - start);
    }
    printf("load_ns=%llu rebuild_ns=%.0f modules=%zu symbols=%zu lines=%zu mapped_bytes=%zu\n",
           (unsigned long long)load_ns, median(rebuild, REBUILDS), statistics.modules,
           statistics.symbols, statistics.lines, statistics.mapped_bytes);
    return 0;
}
