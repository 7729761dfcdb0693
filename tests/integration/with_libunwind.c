/* with_libunwind.c: a program linked with -lexecinfo_ex -lunwind that uses
 * both. libunwind.so also exports a (weak) backtrace; the program must get
 * ours. Prints:
 *   backtrace-from: <dli_fname of the definition the program calls>
 *   unw_backtrace: <count>           (libunwind really is in use)
 *   then backtrace_symbols of backtrace()'s frames, which name the static
 *   function unwind_static_leaf only if backtrace and backtrace_symbols are
 *   ours (glibc's or libunwind's would not name it without -rdynamic). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo_ex.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) static int unwind_static_leaf(void)
{
    Dl_info info;
    int (*ours)(void **, int) = backtrace;
    if (dladdr((void *)ours, &info) == 0 || info.dli_fname == NULL) {
        printf("backtrace-from: (dladdr failed)\n");
        return 1;
    }
    printf("backtrace-from: %s\n", info.dli_fname);

    void *frames[64];
    int unw = unw_backtrace(frames, 64);
    printf("unw_backtrace: %d\n", unw);

    int count = backtrace(frames, 64);
    char **strings = backtrace_symbols(frames, count);
    if (strings == NULL)
        return 1;
    for (int i = 0; i < count; i++)
        printf("%s\n", strings[i]);
    free(strings);
    sink = count;
    return 0;
}

int main(void)
{
    int status = unwind_static_leaf();
    sink += status;
    return status;
}
