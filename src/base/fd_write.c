/* fd_write.c: the one place where bytes leave the library.
 * World: signal-safe (write, pthread_sigmask, sigtimedwait: raw syscalls).
 *
 * write and sigtimedwait go through syscall(), not libc's wrappers, which
 * are cancellation points: a thread cancelled in the middle of a heap walk
 * or a trace would never finish it (the heap layer counts running walks),
 * and a handler must not act on a cancel at all.
 *
 * SIGPIPE is blocked around the write so that a reader that went away costs
 * an error code, not the process; a SIGPIPE we caused is consumed before the
 * mask is restored, one that was pending before is left alone. */
#define _GNU_SOURCE
#include "fd_write.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static int write_loop(int fd, const char *data, size_t length)
{
    while (length > 0) {
        ssize_t written = syscall(SYS_write, fd, data, length);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (written == 0)
            return -EIO;
        data += written;
        length -= (size_t)written;
    }
    return 0;
}

static void consume_our_sigpipe(void)
{
    sigset_t pipe_only;
    struct timespec no_wait = { 0, 0 };

    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    while (syscall(SYS_rt_sigtimedwait, &pipe_only, NULL, &no_wait, (size_t)(_NSIG / 8)) < 0 &&
           errno == EINTR) {
    }
}

int fd_write_all(int fd, const char *data, size_t length)
{
    int saved_errno = errno;
    sigset_t pipe_only, previous;
    int result;

    if (fd < 0) {
        return -EBADF;
    }
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    if (pthread_sigmask(SIG_BLOCK, &pipe_only, &previous) != 0) {
        result = write_loop(fd, data, length);
        errno = saved_errno;
        return result;
    }
    result = write_loop(fd, data, length);
    /* If SIGPIPE was blocked already, a pending one may not be ours. */
    if (result == -EPIPE && !sigismember(&previous, SIGPIPE))
        consume_our_sigpipe();
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = saved_errno;
    return result;
}
