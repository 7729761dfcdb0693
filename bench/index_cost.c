/* index_cost.c: part 6, the symbol index's memory and build time, for
 * lines=own (the default), lines=all and lines=none, each sample a fresh
 * process of index_cost_helper, the option sets alternating. */
#include "bench.h"
#include "timing.h"

#include <stdio.h>

#define SAMPLES 21
#define MODES 3

static const char *const mode_names[MODES] = { "lines=own (default)", "lines=all", "lines=none" };
static const char *const mode_env[MODES] = { NULL, "EXECINFO_EX_OPTIONS=lines=all",
                                             "EXECINFO_EX_OPTIONS=lines=none" };

void bench_index_cost(struct results *results)
{
    double load[MODES][SAMPLES], rebuild[MODES][SAMPLES];
    char path[4096], output[512];

    snprintf(path, sizeof path, "%s/index_cost_helper", bench_directory());
    char *argv[] = { path, NULL };
    for (int sample = 0; sample < bench_count(SAMPLES); sample++) {
        for (int k = 0; k < MODES; k++) {
            int m = (sample + k) % MODES;
            unsigned long long load_ns;
            double rebuild_ns;
            size_t modules, symbols, lines, mapped;
            spawn_helper(path, argv, mode_env[m], output, sizeof output);
            if (sscanf(output, "load_ns=%llu rebuild_ns=%lf modules=%zu symbols=%zu lines=%zu "
                               "mapped_bytes=%zu",
                       &load_ns, &rebuild_ns, &modules, &symbols, &lines, &mapped) != 6)
                bench_fail("index_cost_helper printed: %s", output);
            load[m][sample] = (double)load_ns;
            rebuild[m][sample] = rebuild_ns;
            results->index[m].modules = (double)modules;
            results->index[m].symbols = (double)symbols;
            results->index[m].lines = (double)lines;
            results->index[m].mapped_bytes = (double)mapped;
        }
    }

    printf("\n6. The symbol index of a small program (index_cost_helper: this static\n"
           "   library, libdw, libelf, libc and their dependencies)\n");
    printf("   median of %d processes per option set, interleaved; build at load =\n"
           "   cold (constructor), rebuild = index_build_now() with module data cached\n\n",
           bench_count(SAMPLES));
    printf("   %-22s %8s %9s %9s %12s %14s %12s\n", "EXECINFO_EX_OPTIONS", "modules", "symbols",
           "lines", "mapped KiB", "build at load", "rebuild");
    for (int m = 0; m < MODES; m++) {
        struct index_figures *figures = &results->index[m];
        figures->load_ns = median(load[m], bench_count(SAMPLES));
        figures->rebuild_ns = median(rebuild[m], bench_count(SAMPLES));
        printf("   %-22s %8.0f %9.0f %9.0f %12.1f %11.2f ms %9.1f us\n", mode_names[m],
               figures->modules, figures->symbols, figures->lines, figures->mapped_bytes / 1024,
               figures->load_ns / 1e6, figures->rebuild_ns / 1e3);
    }
}
