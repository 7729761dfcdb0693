/* profile_dump.c: a heap profile each time the dump signal comes
 * (dump_signal= with profile=), from a thread of ours that waits on a
 * pipe which the signal's handler (profile_dump_signal.c) writes to.
 * World: normal (pthread_create; the profile is written as at exit, with
 * malloc and zlib).
 *
 * The thread blocks every signal but the one the every-thread machinery
 * asks threads for their context with (a dump or a crash report names it
 * like any thread, "execinfo-prof"), so that the program's own
 * signals are never run on it. A fork child has no such thread: its
 * handler writes nothing (profile_dump_signal.c checks the pid). */
#define _GNU_SOURCE
#include "profile_dump.h"
#include "heap.h"
#include "heap_profile.h"
#include "../threads/thread_request.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int wake_fds[2] = { -1, -1 };

static void *write_on_request(void *unused)
{
    (void)unused;
    for (;;) {
        char bytes[64];
        ssize_t got = read(wake_fds[0], bytes, sizeof bytes); /* signals meanwhile: one profile */
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return NULL;
        heap_busy++;
        heap_profile_write_and_tell();
        heap_busy--;
    }
}

static int start_thread(void)
{
    sigset_t all, before;
    sigfillset(&all);
    sigdelset(&all, THREAD_REQUEST_SIGNAL);
    pthread_t thread;
    pthread_sigmask(SIG_SETMASK, &all, &before); /* the new thread's mask */
    int result = pthread_create(&thread, NULL, write_on_request, NULL);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (result != 0)
        return -result;
    pthread_setname_np(thread, "execinfo-prof");
    pthread_detach(thread);
    return 0;
}

void profile_dump_start(void)
{
    if (!heap.recording || heap.options.dump_signal == 0 || heap.options.profile[0] == '\0')
        return;
    heap_busy++;
    int result = pipe2(wake_fds, O_CLOEXEC);
    if (result == 0)
        result = fcntl(wake_fds[1], F_SETFL, O_NONBLOCK) == 0 ? 0 : -errno;
    else
        result = -errno;
    if (result == 0)
        result = start_thread();
    if (result == 0)
        result = profile_dump_signal_install(heap.options.dump_signal, wake_fds[1]);
    if (result < 0)
        fprintf(stderr, "execinfo_ex: no heap profiles on the dump signal: %s\n", strerror(-result));
    heap_busy--;
}
