/* first_call_helper.c: the first call of one contender in a fresh process.
 *
 * Built three times: -DCONTENDER=0 (ours, linked with libexecinfo_ex),
 * -DCONTENDER=1 (glibc, a program without our library, glibc's functions
 * taken with dlsym as in the other benchmarks) and -DCONTENDER=2 (libunwind's
 * unw_backtrace, a program with libunwind only). Each process times its very
 * first call with clock_gettime and counts the allocations made during it,
 * then prints one line for bench/first_call.c:
 *     ns=N allocations=N frees=N frames=N
 *
 * Mode "backtrace": the first capture of 30 frames.
 * Mode "symbols": one untimed capture, then the first backtrace_symbols of
 * those 30 frames (ours and glibc only).
 *
 * Allocations are counted by defining malloc and friends in the executable
 * (so that the C library, the loader during dlopen, libunwind and our
 * library all call these) and forwarding them to glibc's.
 *
 * After the call, each helper checks that the capture function came from
 * the library it should (exit 6), and ours that libunwind is not loaded at
 * all (exit 7): our library walks with its own CFI reader. */
#define _GNU_SOURCE
#include "timing.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if CONTENDER == 0
#include <execinfo_ex.h>
#elif CONTENDER == 2
#include <libunwind.h>
#endif

#define FRAMES 30
#define STACK_LEVELS 35

/* ---- counting allocator ---- */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static int armed;
static long allocations, frees;

void *malloc(size_t size)
{
    allocations += armed;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    allocations += armed;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size)
{
    allocations += armed;
    return __libc_realloc(pointer, size);
}

void free(void *pointer)
{
    frees += armed && pointer != NULL;
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size)
{
    allocations += armed;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    allocations += armed;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    allocations += armed;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL)
        return ENOMEM;
    *out = pointer;
    return 0;
}

/* ---- the contender ---- */

static int (*capture)(void **buffer, int size);
static char **(*symbols)(void *const *buffer, int size);

static void choose_contender(void)
{
#if CONTENDER == 0
    capture = backtrace;
    symbols = backtrace_symbols;
#elif CONTENDER == 1
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    if (libc == NULL)
        exit(2);
    capture = (int (*)(void **, int))dlsym(libc, "backtrace");
    symbols = (char **(*)(void *const *, int))dlsym(libc, "backtrace_symbols");
#else
    capture = unw_backtrace;
    symbols = NULL;
#endif
}

static void *frames[FRAMES];

static void report(uint64_t ns, int count)
{
    char line[160];
    int length = snprintf(line, sizeof line, "ns=%llu allocations=%ld frees=%ld frames=%d\n",
                          (unsigned long long)ns, allocations, frees, count);
    if (write(1, line, (size_t)length) != length)
        exit(3);
}

__attribute__((noinline)) static void at_bottom(const char *mode)
{
    if (strcmp(mode, "backtrace") == 0) {
        armed = 1;
        uint64_t start = now_ns();
        int count = capture(frames, FRAMES);
        uint64_t elapsed = now_ns() - start;
        armed = 0;
        report(elapsed, count);
    } else if (strcmp(mode, "symbols") == 0 && symbols != NULL) {
        int count = capture(frames, FRAMES);
        armed = 1;
        uint64_t start = now_ns();
        char **strings = symbols(frames, count);
        uint64_t elapsed = now_ns() - start;
        armed = 0;
        if (strings == NULL)
            exit(4);
        free(strings);
        report(elapsed, count);
    } else {
        exit(5);
    }
}

__attribute__((noinline)) static int descend(int levels, const char *mode)
{
    if (levels == 0) {
        at_bottom(mode);
        return 0;
    }
    int below = descend(levels - 1, mode);
    __asm__ volatile("" ::: "memory");
    return below + 1;
}

/* After the measurement: the function called was the one we meant. */
static int capture_from(const char *module)
{
    Dl_info info;
    return dladdr((void *)capture, &info) != 0 && info.dli_fname != NULL &&
           strstr(info.dli_fname, module) != NULL;
}

/* Ours walks with its own CFI reader and does not link libunwind, so
 * libunwind must not be among this process's modules. */
static int visit_module(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    if (info->dlpi_name != NULL && strstr(info->dlpi_name, "libunwind") != NULL)
        *(int *)found = 1;
    return 0;
}

static int libunwind_loaded(void)
{
    int found = 0;
    dl_iterate_phdr(visit_module, &found);
    return found;
}

int main(int argc, char **argv)
{
    static const char *const modules[] = { "libexecinfo_ex", "libc.so.6", "libunwind.so.8" };

    if (argc != 2)
        return 1;
    choose_contender();
    descend(STACK_LEVELS, argv[1]);
    if (!capture_from(modules[CONTENDER]))
        return 6;
    if (CONTENDER == 0 && libunwind_loaded())
        return 7;
    return 0;
}
