/* text_out and fd_write_all: formatting, counting, flushing at line ends. */
#define _GNU_SOURCE
#include "base/fd_write.h"
#include "base/text_out.h"
#include "support.h"

#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

Test(text_out, numbers_match_printf)
{
    uint64_t samples[] = { 0, 1, 9, 10, 15, 16, 255, 4096, 123456789, UINT32_MAX,
                           (uint64_t)INT64_MAX, UINT64_MAX };
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char ours[65], theirs[65];
        format_unsigned(ours, samples[i], 16);
        snprintf(theirs, sizeof theirs, "%llx", (unsigned long long)samples[i]);
        cr_assert_str_eq(ours, theirs);
        format_unsigned(ours, samples[i], 10);
        snprintf(theirs, sizeof theirs, "%llu", (unsigned long long)samples[i]);
        cr_assert_str_eq(ours, theirs);
    }
}

Test(text_out, counting_mode_counts_past_the_end)
{
    char buffer[4];
    struct text_out out;
    text_out_init_buffer(&out, buffer, sizeof buffer);
    text_out_string(&out, "abcdef");
    text_out_hex(&out, 0xbeef);
    cr_assert_eq(out.total, 10u);
    cr_assert_eq(out.length, 4u);
    cr_assert_eq(memcmp(buffer, "abcd", 4), 0);
}

/* Lines are written whole: with a 16-byte buffer, each write is a line. */
Test(text_out, flushes_whole_lines)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    char buffer[16];
    struct text_out out;
    text_out_init_fd(&out, pipe_fds[1], buffer, sizeof buffer);
    for (int i = 0; i < 5; i++) {
        text_out_string(&out, "line ");
        text_out_decimal(&out, (uint64_t)i);
        text_out_char(&out, '\n');
        text_out_end_line(&out);
    }
    text_out_string(&out, "a line longer than the buffer\n");
    cr_assert_eq(text_out_flush(&out), 0);
    close(pipe_fds[1]);
    char text[256];
    read_all(pipe_fds[0], text, sizeof text);
    cr_assert_str_eq(text, "line 0\nline 1\nline 2\nline 3\nline 4\na line longer than the buffer\n");
}

/* One line of more than two buffers: the line start must not wrap below
 * the buffer's start when the first piece is written (a JSON frame with
 * a long C++ name did, and the next piece crashed in memmove). */
Test(text_out, a_line_longer_than_the_buffer_then_another)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    char buffer[16];
    struct text_out out;
    text_out_init_fd(&out, pipe_fds[1], buffer, sizeof buffer);
    text_out_string(&out, "0123456789abcdefghij");
    text_out_string(&out, "klmnopqrstuvwxyzKLMNOPQRSTUVWXYZ");
    text_out_end_line(&out);
    text_out_string(&out, "0123456789ABCDEFGHIJ");
    cr_assert_eq(text_out_flush(&out), 0);
    close(pipe_fds[1]);
    char text[256];
    read_all(pipe_fds[0], text, sizeof text);
    cr_assert_str_eq(text, "0123456789abcdefghijklmnopqrstuvwxyzKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJ");
}

Test(fd_write, reports_errors_as_negative_codes)
{
    errno = 3;
    cr_assert_eq(fd_write_all(-1, "x", 1), -EBADF);
    cr_assert_eq(fd_write_all(999, "x", 1), -EBADF);
    int full = open("/dev/full", O_WRONLY);
    cr_assert_eq(fd_write_all(full, "x", 1), -ENOSPC);
    close(full);
    cr_assert_eq(errno, 3);
}

/* A pipe that takes 4096 bytes at a time: the partial writes add up. */
Test(fd_write, partial_writes_are_completed, .timeout = 10)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    static char data[300000], got[300001];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    pid_t reader = fork();
    if (reader == 0) {
        close(pipe_fds[1]);
        size_t total = read_all(pipe_fds[0], got, sizeof got);
        _exit(total == sizeof data && memcmp(got, data, sizeof data) == 0 ? 0 : 1);
    }
    close(pipe_fds[0]);
    cr_assert_eq(fd_write_all(pipe_fds[1], data, sizeof data), 0);
    close(pipe_fds[1]);
    int status;
    waitpid(reader, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A signal without SA_RESTART interrupts the blocked write (EINTR or a
 * short write): the loop goes on until everything is written. */
static void on_alarm(int signo)
{
    (void)signo;
}

Test(fd_write, interrupted_writes_are_resumed, .timeout = 20)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    static char data[1 << 18], got[(1 << 18) + 1];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('A' + i % 23);
    pid_t reader = fork();
    if (reader == 0) {
        close(pipe_fds[1]);
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        nanosleep(&pause, NULL); /* let the writer block and be interrupted */
        size_t total = read_all(pipe_fds[0], got, sizeof got);
        _exit(total == sizeof data && memcmp(got, data, sizeof data) == 0 ? 0 : 1);
    }
    close(pipe_fds[0]);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_REAL, &every_ms, NULL);
    int result = fd_write_all(pipe_fds[1], data, sizeof data);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    cr_assert_eq(result, 0);
    close(pipe_fds[1]);
    int status;
    waitpid(reader, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void note_fallback(int fd, int error, const void *context)
{
    char line[64];
    int length = snprintf(line, sizeof line, "[%s failed: %d]\n", (const char *)context, -error);
    fd_write_all(fd, line, (size_t)length);
}

/* A pipe whose reader is gone fails (EPIPE, no SIGPIPE): the block whose
 * write failed and all that follows go to the fallback, after the notice. */
Test(text_out, a_failed_write_falls_back_with_the_whole_block)
{
    int dead[2], alive[2];
    cr_assert_eq(pipe(dead), 0);
    cr_assert_eq(pipe(alive), 0);
    close(dead[0]);
    char buffer[8];
    struct text_out out;
    text_out_init_fd(&out, dead[1], buffer, sizeof buffer);
    text_out_set_fallback(&out, alive[1], note_fallback, "first");
    text_out_string(&out, "one two three\n");
    text_out_end_line(&out);
    text_out_string(&out, "four\n");
    cr_assert_eq(text_out_flush(&out), 0);
    cr_assert_eq(out.fd, alive[1]);
    close(alive[1]);
    char text[128];
    read_all(alive[0], text, sizeof text);
    close(alive[0]);
    close(dead[1]);
    /* The first 8-byte block failed: it is written again, whole. */
    cr_assert_str_eq(text, "[first failed: 32]\none two three\nfour\n");
}
