/* glibc.c: reach glibc's backtrace functions past our interposing ones.
 *
 * The bench is linked with -lexecinfo_ex before libc, so the plain names
 * bind to our library. dlsym on a handle of libc.so.6 looks in libc only,
 * which gives glibc's versions. Both are checked with dladdr, so that a
 * link-order mistake cannot make the tables compare glibc with itself. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>
#include <execinfo_ex.h>
#include <string.h>

struct glibc_api glibc;

static const char *module_of(const void *function)
{
    Dl_info info;
    if (dladdr(function, &info) == 0 || info.dli_fname == NULL)
        return "(unknown)";
    return info.dli_fname;
}

static void *need(void *handle, const char *name)
{
    void *symbol = dlsym(handle, name);
    if (symbol == NULL)
        bench_fail("dlsym(libc.so.6, %s): %s", name, dlerror());
    return symbol;
}

void glibc_open(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    if (libc == NULL)
        bench_fail("dlopen(libc.so.6): %s", dlerror());
    glibc.backtrace = (int (*)(void **, int))need(libc, "backtrace");
    glibc.backtrace_symbols = (char **(*)(void *const *, int))need(libc, "backtrace_symbols");
    glibc.backtrace_symbols_fd =
        (void (*)(void *const *, int, int))need(libc, "backtrace_symbols_fd");

    const void *ours[] = { (void *)backtrace, (void *)backtrace_symbols,
                           (void *)backtrace_symbols_fd };
    const void *theirs[] = { (void *)glibc.backtrace, (void *)glibc.backtrace_symbols,
                             (void *)glibc.backtrace_symbols_fd };
    for (int i = 0; i < 3; i++) {
        if (strstr(module_of(ours[i]), "libexecinfo_ex") == NULL)
            bench_fail("our function %d comes from %s, not libexecinfo_ex", i,
                       module_of(ours[i]));
        if (strstr(module_of(theirs[i]), "libc.so.6") == NULL)
            bench_fail("glibc's function %d comes from %s, not libc.so.6", i,
                       module_of(theirs[i]));
    }
}
