/* first_call.c: first calls in fresh processes (parts 2 and 3 cold).
 *
 * A first call pays for whatever its library does lazily: glibc's first
 * backtrace dlopens libgcc_s (and mallocs), libunwind sets up its caches.
 * Each sample is one fresh process per contender (fork + exec of
 * first_call_helper_*), the contenders alternating within a sample, and we
 * keep the median of the samples. */
#include "bench.h"
#include "timing.h"

#include <stdio.h>

#define SAMPLES 51

struct helper_run {
    int contender;
    const char *mode;
    double ns[SAMPLES], allocations[SAMPLES], process_ns[SAMPLES];
};

static void run_once(struct helper_run *run, int sample)
{
    static const char *const binaries[CONTENDER_COUNT] = {
        "first_call_helper_ours", "first_call_helper_glibc", "first_call_helper_libunwind"
    };
    char path[4096], output[512];
    unsigned long long ns;
    long allocations, frees;
    int frames;

    snprintf(path, sizeof path, "%s/%s", bench_directory(), binaries[run->contender]);
    char *argv[] = { path, (char *)run->mode, NULL };
    uint64_t start = now_ns();
    spawn_helper(path, argv, NULL, output, sizeof output);
    run->process_ns[sample] = (double)(now_ns() - start);
    if (sscanf(output, "ns=%llu allocations=%ld frees=%ld frames=%d", &ns, &allocations,
               &frees, &frames) != 4)
        bench_fail("%s %s printed: %s", path, run->mode, output);
    if (frames != SYMBOL_FRAMES)
        bench_fail("%s %s captured %d frames, not %d", path, run->mode, frames, SYMBOL_FRAMES);
    run->ns[sample] = (double)ns;
    run->allocations[sample] = (double)allocations;
}

void bench_first_call(struct results *results)
{
    struct helper_run runs[] = {
        { .contender = OURS, .mode = "backtrace" },
        { .contender = GLIBC, .mode = "backtrace" },
        { .contender = LIBUNWIND, .mode = "backtrace" },
        { .contender = OURS, .mode = "symbols" },
        { .contender = GLIBC, .mode = "symbols" },
    };
    const int count = (int)(sizeof runs / sizeof runs[0]);

    for (int sample = 0; sample < bench_count(SAMPLES); sample++)
        for (int k = 0; k < count; k++)
            run_once(&runs[(sample + k) % count], sample);

    for (int k = 0; k < count; k++) {
        double ns = median(runs[k].ns, bench_count(SAMPLES));
        double allocations = median(runs[k].allocations, bench_count(SAMPLES));
        if (k < 3) {
            results->first_ns[runs[k].contender] = ns;
            results->first_allocations[runs[k].contender] = allocations;
            results->first_process_ns[runs[k].contender] = median(runs[k].process_ns, bench_count(SAMPLES));
        } else {
            results->symbols_cold_ns[runs[k].contender] = ns;
            results->symbols_cold_allocations[runs[k].contender] = allocations;
        }
    }

    printf("\n2. First backtrace call in a fresh process, %d frames\n", SYMBOL_FRAMES);
    printf("   median of %d processes per contender, interleaved. 'process' is the whole\n"
           "   fork + exec + run + exit of the helper, seen from here: it includes loading\n"
           "   the libraries, and for ours the index build at load (part 6)\n\n", bench_count(SAMPLES));
    printf("   %-10s %14s %12s %12s %14s\n", "", "ns", "vs glibc", "allocations", "process");
    for (int c = 0; c < CONTENDER_COUNT; c++)
        printf("   %-10s %14.0f %11.3fx %12.0f %11.2f ms\n", contender_names[c],
               results->first_ns[c], results->first_ns[c] / results->first_ns[GLIBC],
               results->first_allocations[c], results->first_process_ns[c] / 1e6);
    printf("   (glibc's first backtrace dlopens libgcc_s.so.1, hence its allocations;\n"
           "   libunwind fills its caches with mmap, not malloc)\n");

    printf("\n3a. First backtrace_symbols call in a fresh process, %d frames\n", SYMBOL_FRAMES);
    printf("   (ours: the index was built when the library was loaded; see part 6)\n\n");
    printf("   %-10s %14s %12s %12s\n", "", "ns", "vs glibc", "allocations");
    for (int c = OURS; c <= GLIBC; c++)
        printf("   %-10s %14.0f %11.3fx %12.0f\n", contender_names[c],
               results->symbols_cold_ns[c],
               results->symbols_cold_ns[c] / results->symbols_cold_ns[GLIBC],
               results->symbols_cold_allocations[c]);
}
