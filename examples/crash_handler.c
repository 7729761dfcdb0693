/* A user's own SIGSEGV handler built on execinfo_ex: it writes the trace of
 * the faulting context with calls that are safe inside a signal handler,
 * then dies by the same signal so the exit status stays honest.
 *
 *   cc crash_handler.c $(pkg-config --cflags --libs execinfo_ex)   */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_fatal_signal(int signo, siginfo_t *info, void *ucontext)
{
    static const char banner[] = "*** fatal signal: trace of the faulting context:\n";
    void *frames[64];
    (void)info;

    /* write, backtrace_ucontext and backtrace_print_fd never malloc. */
    write(STDERR_FILENO, banner, sizeof banner - 1);
    int count = backtrace_ucontext(frames, 64, ucontext);
    /* frames[0] is the faulting instruction itself, the rest return addresses. */
    backtrace_print_fd(frames, count, BACKTRACE_FIRST_IS_PC, STDERR_FILENO);

    /* Die by the original signal: restore the default action and re-raise. */
    signal(signo, SIG_DFL);
    raise(signo);
}

static void install_handler(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
}

/* Static on purpose: glibc's backtrace_symbols could not name these
 * without -rdynamic, and not at all since they are not exported. */
static __attribute__((noinline)) void write_through(int *pointer)
{
    *(volatile int *)pointer = 42;
}

static __attribute__((noinline)) void parse_request(int *pointer)
{
    write_through(pointer);
    __asm__ volatile("");
}

int main(void)
{
    install_handler();
    parse_request((int *)16);
    return 0;
}
