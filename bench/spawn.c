/* spawn.c: run a helper in a fresh process and collect what it prints.
 *
 * First calls and index builds happen once per process, so each sample of
 * them is one fork + exec of a small helper binary that times itself and
 * prints the numbers on its standard output. */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *bench_directory(void)
{
    static char directory[PATH_MAX];

    if (directory[0] == '\0') {
        ssize_t length = readlink("/proc/self/exe", directory, sizeof directory - 1);
        if (length <= 0)
            bench_fail("readlink(/proc/self/exe): %s", strerror(errno));
        directory[length] = '\0';
        char *slash = strrchr(directory, '/');
        if (slash != NULL)
            *slash = '\0';
    }
    return directory;
}

/* The environment of the child: ours, less EXECINFO_EX_OPTIONS, plus EXTRA. */
static char **child_environment(const char *extra)
{
    static char *list[512];
    size_t count = 0;

    for (char **entry = environ; *entry != NULL && count < 510; entry++)
        if (strncmp(*entry, "EXECINFO_EX_OPTIONS=", 20) != 0)
            list[count++] = *entry;
    if (extra != NULL)
        list[count++] = (char *)extra;
    list[count] = NULL;
    return list;
}

/* Read FD to its end or until OUTPUT is full; NUL-terminated. */
size_t bench_read_all(int fd, char *output, size_t capacity)
{
    size_t used = 0;
    while (used + 1 < capacity) {
        ssize_t got = read(fd, output + used, capacity - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    output[used] = '\0';
    return used;
}

void spawn_helper(const char *path, char *const argv[], const char *env, char *output,
                  size_t capacity)
{
    int pipe_fds[2];
    char **environment = child_environment(env);

    fflush(stdout);
    if (pipe(pipe_fds) != 0)
        bench_fail("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(pipe_fds[1], 1);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        execve(path, argv, environment);
        _exit(127);
    }
    close(pipe_fds[1]);
    bench_read_all(pipe_fds[0], output, capacity);
    close(pipe_fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("helper %s %s failed (status %#x): %s", path, argv[1] ? argv[1] : "",
                   status, output);
}
