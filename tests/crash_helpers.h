/* crash_helpers.h: what the fatal-handler tests' children do (test side). */
#ifndef EXECINFO_EX_TEST_CRASH_HELPERS_H
#define EXECINFO_EX_TEST_CRASH_HELPERS_H

#include <execinfo_ex.h>
#include <unistd.h>

/* Exit 99 (a status no test expects) if the handler cannot be installed. */
static inline void install_or_exit(const char *options)
{
    if (backtrace_install_fatal_handler(options) != 0)
        _exit(99);
}

/* A SIGSEGV at address 16, in a frame the reports must name. */
__attribute__((noinline, unused)) static void write_to_null(void)
{
    *(volatile int *)16 = 1;
}

#endif
