/* demangle_cost.c: what storing demangled names costs the index build
 * (issue 15), per module: build time and the index's memory with
 * demangle=1 and demangle=0, the two builds interleaved, median of
 * SAMPLES each. Linked with the static library, so that the builder
 * itself (module_data_build_recorded) is timed, without the rest of a
 * process's start. Each module is built as the main executable is by
 * default (lines=main): symbols, lines and inlined calls, in a 64 MiB
 * line budget.
 * Usage: demangle_cost MODULE... (this program itself when none) */
#define _GNU_SOURCE
#include "timing.h"
#include "symbolize/module_data.h"

#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SAMPLES 11
#define LINE_BUDGET ((size_t)64 << 20)

struct cost {
    double build_ns[SAMPLES];
    size_t mapped_bytes, symbols, demangled, lines;
};

static size_t count_demangled(const struct module_data *data)
{
    size_t count = 0;
    for (size_t i = 0; i < data->symbol_count; i++)
        count += data->symbols[i].demangled != data->symbols[i].name;
    return count;
}

static void build_once(const struct module_info *module, int demangle, struct cost *cost,
                       int sample)
{
    size_t line_bytes;
    uint64_t start = now_ns();
    const struct module_data *data =
        module_data_build_recorded(module, LINE_BUDGET, 1, &line_bytes, NULL, demangle);
    cost->build_ns[sample] = (double)(now_ns() - start);
    if (data == NULL) {
        fprintf(stderr, "demangle_cost: %s could not be read\n", module->file_path);
        exit(1);
    }
    cost->mapped_bytes = data->mapped_bytes;
    cost->symbols = data->symbol_count;
    cost->lines = data->line_count;
    cost->demangled = count_demangled(data);
    munmap((void *)data, data->mapped_bytes);
}

static void measure(const char *path)
{
    struct module_info module;
    struct cost cost[2];
    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = (char *)path;
    module.end = UINTPTR_MAX;
    for (int sample = 0; sample < bench_count(SAMPLES); sample++)
        for (int k = 0; k < 2; k++) {
            int demangle = (sample + k) % 2;
            build_once(&module, demangle, &cost[demangle], sample);
        }
    double off = median(cost[0].build_ns, bench_count(SAMPLES)), on = median(cost[1].build_ns, bench_count(SAMPLES));
    printf("   %s\n", path);
    printf("     %zu symbols (%zu demangled), %zu line rows\n", cost[1].symbols, cost[1].demangled,
           cost[1].lines);
    printf("     demangle=0: build %8.2f ms, index %9.1f KiB\n", off / 1e6,
           (double)cost[0].mapped_bytes / 1024);
    printf("     demangle=1: build %8.2f ms, index %9.1f KiB   (%.2fx time, %.2fx memory)\n",
           on / 1e6, (double)cost[1].mapped_bytes / 1024, on / off,
           (double)cost[1].mapped_bytes / (double)cost[0].mapped_bytes);
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    printf("== demangled names in the index (issue 15): one module's build, median of %d,\n"
           "   demangle=0 and =1 interleaved; index = the module's mapped data\n", bench_count(SAMPLES));
    if (argc < 2)
        measure("/proc/self/exe");
    for (int i = 1; i < argc; i++)
        measure(argv[i]);
    return 0;
}
