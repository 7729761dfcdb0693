/* leak_cost.c: what one leak check costs with 1,000,000 live blocks
 * (issue 24: under 1 s), ours beside LeakSanitizer's on the same program.
 *
 * Built twice (bench/bench.mk): linked with libexecinfo_ex_hooks, where
 * the check is backtrace_heap_leak_check, and with -fsanitize=leak, where
 * it is __lsan_do_recoverable_leak_check. The heap: BLOCKS blocks of 32
 * bytes, each pointing at the next (a chain the flood fill must follow),
 * held by an array that a global points at, and one in a hundred lost.
 * Each check is timed alone; the median of REPEATS is printed.
 *
 * Usage: leak_cost [BLOCKS [REPEATS]] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../timing.h"

static void **volatile kept;

/* The LSan build: no second check at exit (its exit status would be 23). */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "leak_check_at_exit=0";
}

static void build_heap(size_t blocks)
{
    kept = malloc(blocks * sizeof *kept);
    void **previous = NULL;
    for (size_t i = 0; i < blocks; i++) {
        void **block = malloc(32);
        block[0] = previous;
        block[1] = NULL;
        previous = block;
        kept[i] = i % 100 == 99 ? NULL : block; /* lost, but the chain still holds it */
        if (i % 1000 == 999)
            previous = NULL; /* chains of 1000: the lost ones at a chain's head leak */
    }
}

int main(int argc, char **argv)
{
    size_t blocks = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    int (*ours)(int, unsigned) = (int (*)(int, unsigned))dlsym(RTLD_DEFAULT,
                                                               "backtrace_heap_leak_check");
    int (*lsan)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "__lsan_do_recoverable_leak_check");
    if (ours == NULL && lsan == NULL) {
        fputs("leak_cost: neither backtrace_heap_leak_check nor LSan is here\n", stderr);
        return 2;
    }
    build_heap(blocks);
    /* LSan writes its report to stderr: away with it, as ours goes to /dev/null. */
    int null = open("/dev/null", O_WRONLY);
    int saved_stderr = dup(2);
    double times[64];
    int leaked = 0;
    if (repeats > 64)
        repeats = 64;
    for (int i = 0; i < repeats; i++) {
        dup2(null, 2);
        uint64_t start = now_ns();
        leaked = ours != NULL ? ours(null, 0) : lsan();
        times[i] = (double)(now_ns() - start) / 1e6;
        dup2(saved_stderr, 2);
    }
    printf("%-28s %8zu live blocks: %8.1f ms a check (median of %d; %s %d)\n",
           ours != NULL ? "execinfo_ex leak check" : "LeakSanitizer", blocks,
           median(times, (size_t)repeats), repeats,
           ours != NULL ? "leaked blocks" : "leaks found:", leaked);
    fflush(stdout);
    return 0;
}
