/* support.h: helpers shared by the tests (normal world, test side only). */
#ifndef EXECINFO_EX_TEST_SUPPORT_H
#define EXECINFO_EX_TEST_SUPPORT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read everything from FD until EOF (at most CAPACITY - 1 bytes). */
static inline size_t read_all(int fd, char *buffer, size_t capacity)
{
    size_t used = 0;
    while (used + 1 < capacity) {
        ssize_t got = read(fd, buffer + used, capacity - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    buffer[used] = '\0';
    return used;
}

/* Run WRITER(fd, context) with fd the write end of a pipe, return what it
 * wrote (malloc'd, NUL-terminated). The pipe is big enough for a trace. */
static inline char *capture_output(void (*writer)(int fd, void *context), void *context)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    fcntl(pipe_fds[1], F_SETPIPE_SZ, 1 << 20);
    writer(pipe_fds[1], context);
    close(pipe_fds[1]);
    char *text = malloc(1 << 20);
    cr_assert_not_null(text);
    read_all(pipe_fds[0], text, 1 << 20);
    close(pipe_fds[0]);
    return text;
}

static inline int count_lines(const char *text)
{
    int lines = 0;
    for (; *text; text++)
        lines += *text == '\n';
    return lines;
}

#endif
