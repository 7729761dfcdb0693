/* profile_dump_signal.c: the dump signal's handler when a heap profile is
 * asked for too (dump_signal= with profile=): it wakes the thread that
 * writes profiles (profile_dump.c) with one byte down a pipe, after the
 * handler it took the signal from (the core library's dump of every
 * thread), and returns: the program runs on.
 * World: signal-safe (write, getpid).
 *
 * The profile is handed to normal code rather than written here: it is
 * gzipped (zlib allocates) into memory that grows as it is written, and
 * its names are copied out of the index by backtrace_resolve into
 * malloc'd memory: a signal handler may call neither. */
#define _GNU_SOURCE
#include "profile_dump.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static struct sigaction previous;
static int wake_fd = -1;
static pid_t owner;   /* a fork child inherits the pipe, not the thread */

static void chain(int signo, siginfo_t *info, void *context)
{
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction != NULL)
            previous.sa_sigaction(signo, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signo);
    }
}

static void on_dump_signal(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    chain(signo, info, context);
    if (getpid() == owner) {
        char byte = 1;
        /* Non-blocking: a full pipe means a profile is asked for already. */
        ssize_t ignored = write(wake_fd, &byte, 1);
        (void)ignored;
    }
    errno = saved_errno;
}

int profile_dump_signal_install(int signo, int fd)
{
    struct sigaction ours;
    if (sigaction(signo, NULL, &previous) != 0)
        return -errno;
    wake_fd = fd;
    owner = getpid();
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_dump_signal;
    ours.sa_mask = previous.sa_mask;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    return sigaction(signo, &ours, NULL) == 0 ? 0 : -errno;
}
