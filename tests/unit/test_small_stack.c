/* A crash handler on a small alternate stack (8 KiB on x86-64, 12 KiB
 * on aarch64, a guard page below): every signal-safe call fits, on its
 * first, coldest use (cache misses, /proc/self/maps lookups). An
 * overflow would hit the guard page and the test would die by SIGSEGV
 * instead of exiting 0. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>

#include "support.h"

/* 8 KiB, plus the whole pages of the ucontext the kernel's signal frame
 * holds: x86-64's (968 bytes) keeps its FP state apart, and the 8 KiB
 * were measured with it (docs/SIGNAL_SAFETY.md); aarch64's (4560 bytes)
 * carries its FP/SIMD record in a 4 KiB __reserved (MINSIGSTKSZ 5120
 * there, 2048 on x86-64), and the frame is 4.7 KiB before our code runs. */
#define ALTERNATE_STACK (8192 + sizeof(ucontext_t) / 4096 * 4096)

static int output_fd;
static void *unindexed_address; /* in a module loaded after the index */

static void on_segv(int signo, siginfo_t *info, void *ucontext)
{
    void *frames[64];
    (void)signo;
    (void)info;
    int count = backtrace_ucontext(frames, 63, ucontext);
    frames[count] = unindexed_address; /* named through /proc/self/maps */
    backtrace_symbols_fd(frames, count + 1, output_fd);
    backtrace_print_fd(frames, count, BACKTRACE_FIRST_IS_PC, output_fd);
    print_trace_fd(output_fd);
    int own = backtrace(frames, 64);
    backtrace_symbols_fd(frames, own, output_fd);
    _exit(count > 0 && own > 0 ? 0 : 1);
}

__attribute__((noinline)) static void fault(volatile int *pointer)
{
    *pointer = 1;
}

Test(small_stack, every_signal_safe_call_fits_in_a_small_stack, .timeout = 20)
{
    /* A guard page, then the stack: an overflow faults instead of
     * silently writing below. */
    char *memory = mmap(NULL, 4096 + ALTERNATE_STACK, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(memory, MAP_FAILED);
    cr_assert_eq(mprotect(memory, 4096, PROT_NONE), 0);
    stack_t stack = { .ss_sp = memory + 4096, .ss_size = ALTERNATE_STACK, .ss_flags = 0 };
    cr_assert_eq(sigaltstack(&stack, NULL), 0);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &action, NULL);
    output_fd = open("/dev/null", O_WRONLY);
    void *library = dlopen(getenv("FIXTURE_LIB"), RTLD_NOW);
    cr_assert_not_null(library);
    unindexed_address = dlsym(library, "fixture_function");
    cr_assert_not_null(unindexed_address);
    /* Cold: no capture has run yet, and the alternate stack is unknown. */
    fault((volatile int *)8);
    cr_assert_fail("no fault");
}
