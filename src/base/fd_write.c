/* fd_write.c: the one place where bytes leave the library.
 * World: signal-safe (write, pthread_sigmask, sigtimedwait: raw syscalls).
 *
 * write and sigtimedwait go through syscall(), not libc's wrappers, which
 * are cancellation points: a thread cancelled in the middle of a heap walk
 * or a trace would never finish it (the heap layer counts running walks),
 * and a handler must not act on a cancel at all.
 *
 * SIGPIPE and SIGXFSZ are blocked around the write so that a reader that
 * went away, or a file at its RLIMIT_FSIZE, costs an error code (EPIPE,
 * EFBIG), not the process: a crash report must not turn a SIGSEGV into a
 * death by SIGXFSZ. A signal we caused is consumed before the mask is
 * restored; one that was pending before (blocked already) is left alone. */
#define _GNU_SOURCE
#include "fd_write.h"
#include "signal_consume.h"

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

/* The signal that the write's error RESULT came with, if any. */
static int signal_of(int result)
{
    return result == -EPIPE ? SIGPIPE : result == -EFBIG ? SIGXFSZ : 0;
}

int fd_write_all(int fd, const char *data, size_t length)
{
    int saved_errno = errno;
    sigset_t quiet, previous;
    int result;

    if (fd < 0) {
        return -EBADF;
    }
    sigemptyset(&quiet);
    sigaddset(&quiet, SIGPIPE);
    sigaddset(&quiet, SIGXFSZ);
    if (pthread_sigmask(SIG_BLOCK, &quiet, &previous) != 0) {
        result = write_loop(fd, data, length);
        errno = saved_errno;
        return result;
    }
    result = write_loop(fd, data, length);
    /* If it was blocked already, a pending one may not be ours. */
    int raised = signal_of(result);
    if (raised != 0 && !sigismember(&previous, raised))
        signal_consume(raised);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = saved_errno;
    return result;
}
