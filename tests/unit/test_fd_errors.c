/* backtrace_symbols_fd and print_trace_fd against fds that refuse: they
 * return quietly, the process survives SIGPIPE, errno is kept. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <signal.h>
#include <stdio.h>

#include "support.h"

static void *frames[32];
static int frame_count;

static void capture(void)
{
    frame_count = backtrace(frames, 32);
    cr_assert_gt(frame_count, 2);
}

Test(fd_errors, bad_fd_returns_quietly_keeping_errno)
{
    capture();
    errno = 1234;
    backtrace_symbols_fd(frames, frame_count, -1);
    cr_assert_eq(errno, 1234);
    backtrace_symbols_fd(frames, frame_count, 987);
    cr_assert_eq(errno, 1234);
    print_trace_fd(987);
    cr_assert_eq(errno, 1234);
}

Test(fd_errors, full_device_returns_quietly_keeping_errno)
{
    int fd = open("/dev/full", O_WRONLY);
    cr_assert_geq(fd, 0);
    capture();
    errno = 77;
    backtrace_symbols_fd(frames, frame_count, fd);
    print_trace_fd(fd);
    cr_assert_eq(errno, 77);
    close(fd);
}

/* Default SIGPIPE action: a write to a pipe without reader would kill us. */
Test(fd_errors, pipe_without_reader_raises_no_sigpipe, .timeout = 10)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    close(pipe_fds[0]);
    signal(SIGPIPE, SIG_DFL);
    capture();
    errno = 5;
    backtrace_symbols_fd(frames, frame_count, pipe_fds[1]);
    print_trace_fd(pipe_fds[1]);
    cr_assert_eq(errno, 5);
    sigset_t pending;
    sigpending(&pending);
    cr_assert_not(sigismember(&pending, SIGPIPE), "our SIGPIPE was left pending");
    close(pipe_fds[1]);
}

/* A SIGPIPE that the program had blocked and pending stays pending. */
Test(fd_errors, someone_elses_pending_sigpipe_is_kept, .timeout = 10)
{
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_only, NULL);
    raise(SIGPIPE);
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    close(pipe_fds[0]);
    capture();
    backtrace_symbols_fd(frames, frame_count, pipe_fds[1]);
    sigpending(&pending);
    cr_assert(sigismember(&pending, SIGPIPE));
}

/* Output larger than the internal buffer arrives whole, in order. */
static void write_many(int fd, void *context)
{
    (void)context;
    void *many[400];
    for (int i = 0; i < 400; i++)
        many[i] = frames[i % frame_count];
    backtrace_symbols_fd(many, 400, fd);
}

Test(fd_errors, long_output_is_complete)
{
    capture();
    char *text = capture_output(write_many, NULL);
    cr_assert_eq(count_lines(text), 400);
    char **symbols = backtrace_symbols(frames, frame_count);
    cr_assert_not_null(symbols);
    /* Line 0 and line frame_count are the same frame. */
    char *second = text;
    for (int i = 0; i < frame_count; i++)
        second = strchr(second, '\n') + 1;
    cr_assert_eq(strncmp(text, second, (size_t)(strchr(text, '\n') - text)), 0);
    free(symbols);
    free(text);
}

/* ENOMEM: make malloc fail and check backtrace_symbols says so. Not under
 * ASan (make test-asan): this malloc beside ASan's allocator mixes the two
 * heaps in every test of this file. */
#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t);
static int fail_malloc;
void *malloc(size_t size)
{
    if (fail_malloc) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}

Test(fd_errors, backtrace_symbols_out_of_memory_is_null_enomem)
{
    capture();
    backtrace_refresh_index(); /* so that the failing call only formats */
    fail_malloc = 1;
    errno = 0;
    char **symbols = backtrace_symbols(frames, frame_count);
    int saved = errno;
    fail_malloc = 0;
    cr_assert_null(symbols);
    cr_assert_eq(saved, ENOMEM);
}
#endif
