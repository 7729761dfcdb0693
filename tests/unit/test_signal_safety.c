/* The first use of every signal-safe call happens inside a SIGSEGV handler
 * while every malloc-family function is a trap: one allocation and the
 * process exits 42, failing the test. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "support.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static atomic_int trap_armed;

static void trap(const char *what)
{
    if (!atomic_load(&trap_armed))
        return;
    static const char message[] = "TRAP: allocation in a signal-safe call: ";
    write(2, message, sizeof message - 1);
    write(2, what, strlen(what));
    write(2, "\n", 1);
    _exit(42);
}

void *malloc(size_t size) { trap("malloc"); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { trap("calloc"); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { trap("realloc"); return __libc_realloc(p, size); }
void free(void *p) { if (p) trap("free"); __libc_free(p); }
void *memalign(size_t a, size_t size) { trap("memalign"); return __libc_memalign(a, size); }
void *aligned_alloc(size_t a, size_t size) { trap("aligned_alloc"); return __libc_memalign(a, size); }
int posix_memalign(void **out, size_t a, size_t size)
{
    trap("posix_memalign");
    *out = __libc_memalign(a, size);
    return *out ? 0 : ENOMEM;
}

static int output_pipe[2];

static volatile int stores;

/* Two inlined calls deep: the writers look up the inline chain under the
 * trap too. */
static inline __attribute__((always_inline)) void store_inlined(volatile int *pointer)
{
    stores++;
    *pointer = 1;
}

static inline __attribute__((always_inline)) void store_through(volatile int *pointer)
{
    stores += 2;
    store_inlined(pointer);
    stores += 3;
}

__attribute__((noinline)) static void fault_here(volatile int *pointer)
{
    store_through(pointer);
}

static void check_output(int count)
{
    char text[1 << 16];
    close(output_pipe[1]);
    read_all(output_pipe[0], text, sizeof text);
    /* ucontext frame 0 is the faulting function, named in both shapes. */
    int ok = count >= 3 && strstr(text, "(fault_here+0x") != NULL &&
             strstr(text, "Obtained ") != NULL && strstr(text, "test_signal_safety.c:") != NULL &&
             strstr(text, "    inlined: store_inlined at ") != NULL &&
             strstr(text, "    inlined: store_through at ") != NULL;
    if (!ok)
        write(2, text, strlen(text));
    _exit(ok ? 0 : 1);
}

static void on_segv(int signo, siginfo_t *info, void *ucontext)
{
    void *frames[64], *own[64];
    (void)signo;
    (void)info;
    int count = backtrace_ucontext(frames, 64, ucontext);
    int own_count = backtrace(own, 64);
    backtrace_symbols_fd(frames, count, output_pipe[1]);
    backtrace_symbols_fd(own, own_count, output_pipe[1]);
    backtrace_print_fd(frames, count, BACKTRACE_FIRST_IS_PC, output_pipe[1]);
    print_trace_fd(output_pipe[1]);
    atomic_store(&trap_armed, 0);
    check_output(count);
}

Test(signal_safety, first_calls_inside_sigsegv_handler_never_allocate, .timeout = 20)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_segv;
    action.sa_flags = SA_SIGINFO;
    cr_assert_eq(sigaction(SIGSEGV, &action, NULL), 0);
    cr_assert_eq(pipe(output_pipe), 0);
    fcntl(output_pipe[1], F_SETPIPE_SZ, 1 << 16);
    atomic_store(&trap_armed, 1);
    fault_here((volatile int *)16);
    cr_assert_fail("the fault did not happen");
}

/* The trap itself works: an allocation while armed exits 42. */
Test(signal_safety, the_trap_catches_an_allocation, .exit_code = 42, .timeout = 10)
{
    atomic_store(&trap_armed, 1);
    void *volatile p = malloc(16);
    (void)p;
}

Test(signal_safety, print_trace_to_stderr_never_allocates, .timeout = 10)
{
    int pipe_fds[2], saved_stderr = dup(2);
    char text[1 << 14];
    cr_assert_eq(pipe(pipe_fds), 0);
    dup2(pipe_fds[1], 2);
    atomic_store(&trap_armed, 1);
    print_trace();
    atomic_store(&trap_armed, 0);
    dup2(saved_stderr, 2);
    close(pipe_fds[1]);
    read_all(pipe_fds[0], text, sizeof text);
    cr_assert(strncmp(text, "Obtained ", 9) == 0, "%s", text);
    /* print_trace starts at its caller: this test function. */
    cr_assert(strstr(strchr(text, '\n'), "print_trace_to_stderr_never_allocates") != NULL,
              "%s", text);
}
