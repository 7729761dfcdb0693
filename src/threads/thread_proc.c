/* thread_proc.c: read one thread's stat, status and syscall files.
 * World: signal-safe (open, read, close into stack buffers).
 * Formats: proc(5). */
#define _GNU_SOURCE
#include "thread_proc.h"
#include "../base/text_out.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* "/proc/self/task/TID/LEAF" into PATH (64 bytes). */
static void task_path(char *path, pid_t tid, const char *leaf)
{
    static const char prefix[] = "/proc/self/task/";
    char digits[72];
    size_t length = sizeof prefix - 1;
    memcpy(path, prefix, length);
    size_t count = format_unsigned(digits, (uint64_t)tid, 10);
    memcpy(path + length, digits, count);
    length += count;
    path[length++] = '/';
    size_t leaf_length = strlen(leaf);
    memcpy(path + length, leaf, leaf_length + 1);
}

/* The file's first SIZE - 1 bytes, NUL-terminated. Returns the length or
 * a negative errno (-ENOENT for a thread that is gone). */
static long read_task_file(pid_t tid, const char *leaf, char *buffer, size_t size)
{
    char path[64];
    task_path(path, tid, leaf);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ESRCH ? -ENOENT : -errno;
    size_t length = 0;
    while (length < size - 1) {
        ssize_t got = read(fd, buffer + length, size - 1 - length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got < 0 && length == 0) {
                int error = errno == ESRCH ? -ENOENT : -errno;
                close(fd);
                return error;
            }
            break;
        }
        length += (size_t)got;
    }
    close(fd);
    buffer[length] = '\0';
    return (long)length;
}

int thread_proc_stat(pid_t tid, char *name, char *state)
{
    char buffer[256];
    long length = read_task_file(tid, "stat", buffer, sizeof buffer);
    if (length < 0)
        return (int)length;
    /* "TID (NAME) S ...": NAME may hold ')' and spaces; the last ')' ends it. */
    char *open_paren = memchr(buffer, '(', (size_t)length), *close_paren = NULL;
    for (char *c = buffer + length; c > buffer && close_paren == NULL; c--)
        if (c[-1] == ')')
            close_paren = c - 1;
    if (open_paren == NULL || close_paren == NULL || close_paren < open_paren ||
        close_paren + 2 >= buffer + length)
        return -EINVAL;
    size_t name_length = (size_t)(close_paren - open_paren - 1);
    if (name_length > 15)
        name_length = 15;
    memcpy(name, open_paren + 1, name_length);
    name[name_length] = '\0';
    *state = close_paren[2];
    return 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A hexadecimal or decimal (BASE) number at *TEXT, moving past it. */
static uint64_t parse_number(const char **text, unsigned base)
{
    uint64_t value = 0;
    const char *c = *text;
    if (base == 16 && c[0] == '0' && c[1] == 'x')
        c += 2;
    for (int digit; (digit = hex_digit(*c)) >= 0 && (unsigned)digit < base; c++)
        value = value * base + (unsigned)digit;
    *text = c;
    return value;
}

/* The mask on the status line that starts with KEY ("\nSigBlk:"). */
static int status_mask(const char *status, const char *key, uint64_t *mask)
{
    const char *line = strstr(status, key);
    if (line == NULL)
        return -EINVAL;
    line += strlen(key);
    while (*line == ' ' || *line == '\t')
        line++;
    *mask = parse_number(&line, 16);
    return 0;
}

/* Blocked is not enough: a thread running a handler of SIGNO has it
 * blocked too, until the handler returns (our own request's, while it
 * answers). One that blocks it with SIGNO still pending (SigPnd: its
 * own queue, where a request sent to it by tid waits) cannot take it. */
int thread_proc_signal_masks(pid_t tid, uint64_t *blocked, uint64_t *pending)
{
    char buffer[2048];
    long length = read_task_file(tid, "status", buffer, sizeof buffer);
    if (length < 0)
        return (int)length;
    if (status_mask(buffer, "\nSigBlk:", blocked) < 0 ||
        status_mask(buffer, "\nSigPnd:", pending) < 0)
        return -EINVAL;
    return 0;
}

int thread_proc_blocks(pid_t tid, int signo)
{
    uint64_t blocked, pending;
    int error = thread_proc_signal_masks(tid, &blocked, &pending);
    if (error < 0)
        return error;
    if (!((pending >> (signo - 1)) & 1))
        return 0; /* nothing waits: it took the request, or is taking it */
    /* SIGKILL and SIGSTOP can never be blocked, and glibc's
     * pthread_sigmask never blocks its own two (32 and 33, for
     * cancellation and setxid): every other bit set. */
    uint64_t blockable = ~((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)) | (1ull << 31) |
                           (1ull << 32));
    if ((blocked & blockable) == blockable)
        return 2;
    return (blocked >> (signo - 1)) & 1;
}

int thread_proc_syscall(pid_t tid, long *number, uintptr_t *sp, uintptr_t *pc)
{
    char buffer[256];
    long length = read_task_file(tid, "syscall", buffer, sizeof buffer);
    if (length < 0)
        return (int)length;
    if (strncmp(buffer, "running", 7) == 0)
        return -EAGAIN;
    /* "NR ARG1..ARG6 SP PC", or "-1 SP PC" when stopped in user space. */
    const char *c = buffer;
    int negative = *c == '-';
    if (negative)
        c++;
    long nr = (long)parse_number(&c, 10);
    *number = negative ? -nr : nr;
    uint64_t fields[8];
    int count = 0;
    while (count < 8 && *c == ' ') {
        c++;
        fields[count++] = parse_number(&c, 16);
    }
    if (count < 2)
        return -EINVAL;
    *sp = (uintptr_t)fields[count - 2];
    *pc = (uintptr_t)fields[count - 1];
    return 0;
}
