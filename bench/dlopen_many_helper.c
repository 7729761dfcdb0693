/* dlopen_many_helper.c: dlopen (RTLD_NOW) every path of its arguments, in
 * order, and print "<ns of the loop> <opened> <modules loaded after>";
 * with "--cycle N PATH", open and close PATH N times instead (PATH may be
 * a library already loaded, whose dlopen only counts a reference).
 * Run by bench/dlopen_bench.c with and without our library preloaded.
 * A path that does not open is skipped (a system library not installed). */
#define _GNU_SOURCE
#include "timing.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

static int count_module(struct dl_phdr_info *info, size_t size, void *opaque)
{
    (void)info;
    (void)size;
    ++*(int *)opaque;
    return 0;
}

int main(int argc, char **argv)
{
    int opened = 0, modules = 0;
    uint64_t start = now_ns();
    if (argc == 4 && strcmp(argv[1], "--cycle") == 0) {
        for (int i = 0; i < atoi(argv[2]); i++) {
            void *handle = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
            if (handle != NULL && dlclose(handle) == 0)
                opened++;
        }
    } else {
        for (int i = 1; i < argc; i++)
            if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) != NULL)
                opened++;
    }
    uint64_t elapsed = now_ns() - start;
    dl_iterate_phdr(count_module, &modules);
    printf("%llu %d %d\n", (unsigned long long)elapsed, opened, modules);
    return 0;
}
