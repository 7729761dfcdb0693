/* support.h: helpers shared by the tests (normal world, test side only). */
#ifndef EXECINFO_EX_TEST_SUPPORT_H
#define EXECINFO_EX_TEST_SUPPORT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Read everything from FD until EOF, keeping at most CAPACITY - 1 bytes:
 * the rest is read and dropped, so that a writer on the other end of a
 * pipe never stalls on a reader that stopped (a crash report that outgrew
 * the buffer once lost its end that way, its writer giving up). */
static inline size_t read_all(int fd, char *buffer, size_t capacity)
{
    size_t used = 0;
    char dropped[4096];
    for (;;) {
        int full = used + 1 >= capacity;
        ssize_t got = full ? read(fd, dropped, sizeof dropped)
                           : read(fd, buffer + used, capacity - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (!full)
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

/* ---- crashing for real in a child process ---- */

struct child_result {
    int status;
    char output[1 << 20]; /* every thread's trace, under ASan too */
};

/* Run BODY(CONTEXT) in a child whose stderr is a pipe; wait for it. The
 * Criterion test's timeout bounds a child that hangs. */
static inline void run_child(void (*body)(void *), void *context, struct child_result *result)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(pipe_fds[0]);
        dup2(pipe_fds[1], 2);
        body(context);
        _exit(0);
    }
    close(pipe_fds[1]);
    read_all(pipe_fds[0], result->output, sizeof result->output);
    close(pipe_fds[0]);
    cr_assert_eq(waitpid(child, &result->status, 0), child);
}

/* Run PROGRAM with ARGV (NULL-terminated, argv[0] included), stdout and
 * stderr into RESULT; PREPARE(CONTEXT), if not NULL, runs in the child
 * before exec (its environment, its signals). Exit 127 if exec failed. */
static inline void run_program(const char *program, char *const argv[],
                               void (*prepare)(void *), void *context,
                               struct child_result *result)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        dup2(pipe_fds[1], 1);
        dup2(pipe_fds[1], 2);
        close(pipe_fds[0]);
        if (prepare != NULL)
            prepare(context);
        execv(program, argv);
        _exit(127);
    }
    close(pipe_fds[1]);
    read_all(pipe_fds[0], result->output, sizeof result->output);
    close(pipe_fds[0]);
    cr_assert_eq(waitpid(child, &result->status, 0), child);
}

static inline void assert_died_by(const struct child_result *result, int signo)
{
    cr_assert(WIFSIGNALED(result->status) && WTERMSIG(result->status) == signo,
              "status 0x%x, want death by %d; output:\n%s", result->status, signo, result->output);
}

static inline void assert_exited_with(const struct child_result *result, int code)
{
    cr_assert(WIFEXITED(result->status) && WEXITSTATUS(result->status) == code,
              "status 0x%x, want exit %d; output:\n%s", result->status, code, result->output);
}

static inline int count_of(const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle))
        count++;
    return count;
}

/* Whether the heap facts of a report's TEXT and of its JSON agree, as
 * tests/tools/heap_report_facts.py reads them: 1, or 0 with its verdict
 * in VERDICT (CAPACITY bytes). */
static inline int heap_facts_agree(const char *text, const char *json, char *verdict,
                                   size_t capacity)
{
    char text_path[96], json_path[96], check[512];
    snprintf(text_path, sizeof text_path, "/tmp/execinfo_ex_facts_%d.txt", (int)getpid());
    snprintf(json_path, sizeof json_path, "/tmp/execinfo_ex_facts_%d.json", (int)getpid());
    FILE *file = fopen(text_path, "w");
    cr_assert_not_null(file);
    fputs(text, file);
    fclose(file);
    file = fopen(json_path, "w");
    cr_assert_not_null(file);
    fputs(json, file);
    fclose(file);
    snprintf(check, sizeof check, "python3 %s/../tests/tools/heap_report_facts.py %s %s 2>&1",
             getenv("EXECINFO_EX_BUILD"), text_path, json_path);
    FILE *pipe = popen(check, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(verdict, 1, capacity - 1, pipe);
    verdict[length] = '\0';
    int status = pclose(pipe);
    unlink(text_path);
    unlink(json_path);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The line of SOURCE (a path from the checkout, where make test runs) that
 * holds MARK as a word of its own ("@read_1" is not "@read_16"): a
 * fixture marks the lines a test expects in a report, so that no line
 * number is written down twice. 0 when none does. */
static inline int marked_line(const char *source, const char *mark)
{
    FILE *file = fopen(source, "r");
    cr_assert_not_null(file, "%s: %s", source, strerror(errno));
    char line[1024];
    size_t length = strlen(mark);
    int number = 0, found = 0;
    while (found == 0 && fgets(line, sizeof line, file) != NULL) {
        number++;
        for (const char *at = strstr(line, mark); at != NULL && found == 0;
             at = strstr(at + 1, mark)) {
            char next = at[length];
            if (!(next == '_' || (next >= '0' && next <= '9') || (next >= 'a' && next <= 'z') ||
                  (next >= 'A' && next <= 'Z')))
                found = number;
        }
    }
    fclose(file);
    return found;
}

#endif
