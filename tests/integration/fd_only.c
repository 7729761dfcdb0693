/* fd_only.c: a program that calls nothing of execinfo_ex but backtrace and
 * backtrace_symbols_fd (the crash-handler subset). Linked statically against
 * libexecinfo_ex.a, only the archive members these two need are pulled in;
 * the symbol index must still be built (at load, by the library's
 * constructor) so that static functions are named, not path(+0xoffset). */
#include <execinfo_ex.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) static void fd_only_static_leaf(void)
{
    void *frames[64];
    int count = backtrace(frames, 64);
    backtrace_symbols_fd(frames, count, STDOUT_FILENO);
    sink = count; /* no tail call */
}

__attribute__((noinline)) void fd_only_global_middle(void)
{
    fd_only_static_leaf();
    sink++;
}

int main(void)
{
    fd_only_global_middle();
    sink++;
    return 0;
}
