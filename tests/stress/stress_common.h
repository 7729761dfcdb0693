/* stress_common.h: what the stress drivers and their fixtures share (test
 * side only): knobs from the environment, signal-safe number writing, a
 * child run with a hard deadline, and the report checks.
 *
 * Nothing here uses Criterion: the long runs are plain programs that print
 * one figure each and exit 0 (all held) or 1 (something failed), so that
 * `make stress` can run them for minutes and CI for seconds. */
#ifndef EXECINFO_EX_STRESS_COMMON_H
#define EXECINFO_EX_STRESS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double stress_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static inline long stress_env_long(const char *name, long fallback)
{
    const char *text = getenv(name);
    if (text == NULL || *text == '\0')
        return fallback;
    char *end;
    long value = strtol(text, &end, 10);
    return *end == '\0' && value > 0 ? value : fallback;
}

/* xorshift: each run and thread has its own sequence, printed on failure. */
static inline uint64_t stress_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* ---- signal-safe writing (for the handlers of the fixtures) ---------------- */

struct safe_line {
    char text[256];
    size_t used;
};

static inline void safe_put(struct safe_line *line, const char *text)
{
    while (*text && line->used < sizeof line->text - 1)
        line->text[line->used++] = *text++;
}

static inline void safe_put_number(struct safe_line *line, uint64_t value, int base)
{
    char digits[24];
    int count = 0;
    do {
        digits[count++] = "0123456789abcdef"[value % (uint64_t)base];
        value /= (uint64_t)base;
    } while (value != 0);
    while (count > 0 && line->used < sizeof line->text - 1)
        line->text[line->used++] = digits[--count];
}

/* One write: the line goes out whole or not at all, as the checks expect. */
static inline void safe_send(struct safe_line *line, int fd)
{
    size_t done = 0;
    while (done < line->used) {
        ssize_t wrote = write(fd, line->text + done, line->used - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            break;
        done += (size_t)wrote;
    }
    line->used = 0;
}

/* ---- running a child with a deadline ------------------------------------------ */

struct run_result {
    pid_t pid;           /* the child's (and its process group's) */
    int status;          /* waitpid's, when not hung */
    int hung;            /* killed at the deadline */
    double seconds;
    char *output;        /* stdout and stderr, malloc'd, NUL-terminated */
    size_t length;
};

/* Run ARGV (argv[0] the path) with ENVIRONMENT entries ("NAME=value", NULL
 * ended) added, stdout and stderr into RESULT->output. At DEADLINE seconds
 * the child's whole process group is killed and the run counts as hung. */
static inline void run_bounded(char *const argv[], char *const environment[], double deadline,
                               struct run_result *result)
{
    int pipe_fds[2];
    memset(result, 0, sizeof *result);
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        perror("pipe");
        exit(2);
    }
    double start = stress_now();
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        exit(2);
    }
    if (child == 0) {
        setpgid(0, 0);
        dup2(pipe_fds[1], 1);
        dup2(pipe_fds[1], 2);
        for (int i = 0; environment != NULL && environment[i] != NULL; i++)
            putenv(environment[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(child, child);
    result->pid = child;
    close(pipe_fds[1]);
    size_t capacity = 1 << 16;
    result->output = malloc(capacity);
    int open_pipe = 1, exited = 0;
    for (;;) {
        if (open_pipe) {
            struct pollfd poll_fd = { pipe_fds[0], POLLIN, 0 };
            if (poll(&poll_fd, 1, 20) > 0) {
                if (result->length + 4096 + 1 > capacity) {
                    capacity *= 2;
                    result->output = realloc(result->output, capacity);
                }
                ssize_t got = read(pipe_fds[0], result->output + result->length,
                                   capacity - result->length - 1);
                if (got > 0)
                    result->length += (size_t)got;
                else if (got == 0 || errno != EINTR)
                    open_pipe = 0;
            }
        } else if (!exited) {
            struct timespec pause = { 0, 10 * 1000 * 1000 };
            nanosleep(&pause, NULL);
        }
        if (!exited && waitpid(child, &result->status, WNOHANG) == child) {
            exited = 1;
            result->seconds = stress_now() - start;
        }
        /* A grandchild may hold the pipe: a short grace after the exit. */
        if (exited && (!open_pipe || stress_now() - start > result->seconds + 2))
            break;
        if (!exited && stress_now() - start > deadline) {
            kill(-child, SIGKILL);
            kill(child, SIGKILL);
            waitpid(child, &result->status, 0);
            result->hung = 1;
            result->seconds = stress_now() - start;
            break;
        }
    }
    kill(-child, SIGKILL); /* whatever of its group is left */
    close(pipe_fds[0]);
    result->output[result->length] = '\0';
}

static inline const char *describe_status(const struct run_result *result, char *text,
                                          size_t size)
{
    if (result->hung)
        snprintf(text, size, "hung (killed after %.1f s)", result->seconds);
    else if (WIFSIGNALED(result->status))
        snprintf(text, size, "killed by signal %d (%s)", WTERMSIG(result->status),
                 strsignal(WTERMSIG(result->status)));
    else
        snprintf(text, size, "exit %d", WEXITSTATUS(result->status));
    return text;
}

/* ---- checking text ---------------------------------------------------------- */

/* The lines of TEXT (modified in place), at most CAPACITY; an unterminated
 * last line is counted in *UNTERMINATED. */
static inline int split_lines(char *text, char **lines, int capacity, int *unterminated)
{
    int count = 0;
    *unterminated = 0;
    while (*text) {
        char *end = strchr(text, '\n');
        if (end == NULL) {
            *unterminated = 1;
            end = text + strlen(text);
            if (count < capacity)
                lines[count++] = text;
            break;
        }
        *end = '\0';
        if (count < capacity)
            lines[count++] = text;
        text = end + 1;
    }
    return count;
}

static inline int starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* A frame as backtrace_symbols and the reports write it:
 * "...[0xHEX]" (symbols_fd) or "... [0xHEX]" optionally " at file:line". */
static inline int is_frame_line(const char *line)
{
    const char *open = strstr(line, "[0x");
    if (open == NULL)
        return 0;
    const char *hex = open + 3;
    if (!strchr("0123456789abcdef", *hex) || *hex == '\0')
        return 0;
    while (*hex && strchr("0123456789abcdef", *hex))
        hex++;
    if (*hex != ']')
        return 0;
    hex++;
    if (*hex == '\0')
        return 1;
    if (!starts_with(hex, " at "))
        return 0;
    const char *colon = strrchr(hex, ':');
    if (colon == NULL || colon[1] == '\0')
        return 0;
    for (const char *digit = colon + 1; *digit; digit++)
        if (*digit < '0' || *digit > '9')
            return 0;
    return 1;
}

/* A strict JSON check: one value, then only whitespace. Returns NULL when
 * it is valid, else where it stopped being so. */
static const char *json_value(const char *at, int depth);

static inline const char *json_space(const char *at)
{
    while (*at == ' ' || *at == '\n' || *at == '\t' || *at == '\r')
        at++;
    return at;
}

static inline const char *json_string_end(const char *at)
{
    if (*at != '"')
        return NULL;
    for (at++; *at && *at != '"'; at++) {
        if ((unsigned char)*at < 0x20)
            return NULL;
        if (*at == '\\') {
            at++;
            if (*at == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", at[i]) || at[i] == '\0')
                        return NULL;
                at += 4;
            } else if (*at == '\0' || !strchr("\"\\/bfnrt", *at)) {
                return NULL;
            }
        }
    }
    return *at == '"' ? at + 1 : NULL;
}

static const char *json_value(const char *at, int depth)
{
    at = json_space(at);
    if (depth > 64)
        return NULL;
    if (*at == '{' || *at == '[') {
        char close = *at == '{' ? '}' : ']';
        int object = *at == '{';
        at = json_space(at + 1);
        if (*at == close)
            return at + 1;
        for (;;) {
            if (object) {
                at = json_string_end(json_space(at));
                if (at == NULL)
                    return NULL;
                at = json_space(at);
                if (*at != ':')
                    return NULL;
                at++;
            }
            at = json_value(at, depth + 1);
            if (at == NULL)
                return NULL;
            at = json_space(at);
            if (*at == ',') {
                at++;
                continue;
            }
            return *at == close ? at + 1 : NULL;
        }
    }
    if (*at == '"')
        return json_string_end(at);
    if (starts_with(at, "true"))
        return at + 4;
    if (starts_with(at, "false"))
        return at + 5;
    if (starts_with(at, "null"))
        return at + 4;
    const char *start = at;
    if (*at == '-')
        at++;
    while (*at >= '0' && *at <= '9')
        at++;
    if (*at == '.')
        for (at++; *at >= '0' && *at <= '9'; at++)
            ;
    return at > start && at[-1] != '-' ? at : NULL;
}

static inline int json_is_valid(const char *text)
{
    const char *end = json_value(text, 0);
    return end != NULL && *json_space(end) == '\0';
}

#endif
