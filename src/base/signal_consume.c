/* signal_consume.c: take back a signal our own call raised
 * (signal_consume.h). World: signal-safe (a raw rt_sigtimedwait: glibc's
 * sigtimedwait is a cancellation point). */
#define _GNU_SOURCE
#include "signal_consume.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void signal_consume(int signo)
{
    int saved_errno = errno;
    sigset_t only;
    struct timespec no_wait = { 0, 0 };
    sigemptyset(&only);
    sigaddset(&only, signo);
    while (syscall(SYS_rt_sigtimedwait, &only, NULL, &no_wait, (size_t)(_NSIG / 8)) < 0 &&
           errno == EINTR) {
    }
    errno = saved_errno;
}
