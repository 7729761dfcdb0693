/* user_program.c: what a user of execinfo_ex writes, built by run.sh against
 * the installed library with pkg-config, without -rdynamic, dynamically and
 * statically. Prints, to stdout:
 *   == symbols   backtrace_symbols of its stack   "path(name+0x1f) [0xaddr]"
 *   == fd        backtrace_symbols_fd to fd 1     "path(name+0x1f)[0xaddr]"
 *   == print_trace  print_trace_fd(1) from the static function
 * and print_trace() to stderr. run.sh greps for the names of the static
 * function integ_static_leaf and the global function integ_global_middle,
 * and for user_program.c:LINE on the lines marked PRINT_TRACE_CALL. */
#include <execinfo_ex.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) static int integ_static_leaf(int depth)
{
    void *frames[64];
    int count = backtrace(frames, 64);
    char **strings = backtrace_symbols(frames, count);
    if (strings == NULL) {
        perror("backtrace_symbols");
        return 1;
    }
    printf("== symbols %d\n", count);
    for (int i = 0; i < count; i++)
        printf("%s\n", strings[i]);
    free(strings);
    printf("== fd\n");
    fflush(stdout);
    backtrace_symbols_fd(frames, count, STDOUT_FILENO);
    printf("== print_trace\n");
    fflush(stdout);
    print_trace_fd(STDOUT_FILENO); /* PRINT_TRACE_CALL fd */
    print_trace(); /* PRINT_TRACE_CALL stderr */
    printf("== end\n");
    sink = depth; /* no tail calls: the frame stays on the stack */
    return 0;
}

__attribute__((noinline)) int integ_global_middle(int depth)
{
    int status = integ_static_leaf(depth + 1);
    sink += status;
    return status;
}

int main(void)
{
    int status = integ_global_middle(0);
    sink += status;
    return status;
}
