/* arch_fixture.c: the same program for both architectures (issue 27),
 * built at -O0 by tests/arch/compare.sh, whose reports must name the same
 * functions at the same lines on x86-64 and aarch64. CASE (argv[1]):
 *   leaf      a write through NULL in a leaf, three calls deep
 *   call      a call through a NULL function pointer (the caller is in
 *             x30 on aarch64, on the stack on x86-64)
 *   handler   a fault inside a signal handler (the walk crosses the
 *             signal frame: qemu's trampoline on aarch64)
 *   abort     abort() three calls deep (libc's frames, then ours)
 *   trace     no crash: backtrace_print_fd of three calls deep (the
 *             library's frame lines, file:line included) */
#include <execinfo_ex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int *volatile nowhere;
static void (*volatile no_function)(void);

static void leaf(void)
{
    *nowhere = 1;
}

static void call_nothing(void)
{
    no_function();
}

static void trace_here(void)
{
    void *frames[32];
    int count = backtrace(frames, 32);
    backtrace_print_fd(frames, count, 0, STDOUT_FILENO);
}

static void on_usr1(int signo)
{
    (void)signo;
    leaf();
}

static void raise_usr1(void)
{
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
}

static void middle(void (*what)(void))
{
    what();
}

static void outer(void (*what)(void))
{
    middle(what);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "leaf";
    if (strcmp(which, "call") == 0)
        outer(call_nothing);
    else if (strcmp(which, "handler") == 0)
        outer(raise_usr1);
    else if (strcmp(which, "abort") == 0)
        outer(abort);
    else if (strcmp(which, "trace") == 0)
        outer(trace_here);
    else
        outer(leaf);
    return 0;
}
