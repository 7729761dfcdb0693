/* asan_api.h: forced into the API tests (tests/unit/test_*.c) of the ASan
 * build only (tests/sanitize/sanitize.mk), before their first line.
 *
 * libasan interposes glibc's backtrace and backtrace_symbols: it comes
 * first in the lookup order, so a call by name from the test binds to its
 * interceptor, which calls ours (RTLD_NEXT) one frame deeper, and refuses
 * a negative size itself (negative-size-param) before we see it. The
 * tests would test the interceptor. Here the two names mean the library's
 * own definitions, looked up in libexecinfo_ex.so itself once, at load,
 * through a pointer: the caller's frame is the test's, as through the PLT.
 * Every other name, and every other use of these two, is untouched. */
#ifndef EXECINFO_EX_SANITIZE_ASAN_API_H
#define EXECINFO_EX_SANITIZE_ASAN_API_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <execinfo_ex.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef EXECINFO_EX_SONAME
#define EXECINFO_EX_SONAME "libexecinfo_ex.so.0"
#endif

static int (*execinfo_ex_own_backtrace)(void **, int);
static char **(*execinfo_ex_own_backtrace_symbols)(void *const *, int);

__attribute__((constructor)) static void execinfo_ex_find_own_functions(void)
{
    void *library = dlopen(EXECINFO_EX_SONAME, RTLD_LAZY | RTLD_NOLOAD);
    if (library != NULL) {
        execinfo_ex_own_backtrace = (int (*)(void **, int))dlsym(library, "backtrace");
        execinfo_ex_own_backtrace_symbols =
            (char **(*)(void *const *, int))dlsym(library, "backtrace_symbols");
    }
    if (execinfo_ex_own_backtrace == NULL || execinfo_ex_own_backtrace_symbols == NULL) {
        static const char message[] = "asan_api.h: the library's own backtrace not found\n";
        write(2, message, sizeof message - 1);
        abort();
    }
}

/* Function-like: "backtrace" not followed by "(" (a Criterion suite name,
 * pasted into identifiers) stays itself. */
#define backtrace(buffer, size) execinfo_ex_own_backtrace(buffer, size)
#define backtrace_symbols(buffer, size) execinfo_ex_own_backtrace_symbols(buffer, size)

#endif
