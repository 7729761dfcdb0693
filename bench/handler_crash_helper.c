/* handler_crash_helper.c: a program that crashes 30 frames deep, across
 * five modules of its own, for part 7a (bench/handler.c).
 *
 *     handler_crash_helper FD text|json|none|thread
 *
 * FD is the shared page (handler_page.h). "text" and "json" install the
 * fatal handler with format=text or format=json (everything else default:
 * report on stderr, lines=main, frames=64, modules=1) and a crash
 * callback; "none" installs nothing, so the process dies by the kernel's
 * default action; "thread" is "text" with the crash in a thread created
 * after the install (whose first walk is the one in the handler). Then
 * main (or that thread) calls down HANDLER_LEVELS_EXE levels of this
 * executable and five levels of each of libhandler_m1.so ... m4.so, and
 * the deepest level stores t0 in the page and writes to an unmapped
 * address. The callback, which the handler calls after the trace and just
 * before the report's end line, stores t1 first, then the page faults so
 * far (getrusage) and the frame count of the faulting context (both after
 * t1, so not timed).
 *
 * The trace, faulting instruction first: 4 x 5 library frames, 6 levels
 * here, main, libc's __libc_start_call_main and __libc_start_main, _start:
 * 30 frames in 6 modules. -O2 -g, no -rdynamic. */
#define _GNU_SOURCE
#include "handler_page.h"
#include "timing.h"

#include <execinfo_ex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int handler_m1_enter(int depth, struct handler_page *page);

static struct handler_page *page;
static volatile int sink;

static void on_crash(int fd, int format, int signo, const void *siginfo, const void *ucontext,
                     void *context)
{
    void *frames[64];
    (void)fd;
    (void)siginfo;
    (void)context;
    struct rusage usage;
    page->callback_ns = now_ns();
    getrusage(RUSAGE_SELF, &usage);
    page->minflt_callback = usage.ru_minflt;
    page->majflt_callback = usage.ru_majflt;
    page->callback_calls++;
    page->callback_format = format;
    page->callback_signo = signo;
    page->callback_frames = backtrace_ucontext(frames, 64, ucontext);
}

__attribute__((noipa)) static int descend(int depth)
{
    int result = depth > 1 ? descend(depth - 1) : handler_m1_enter(HANDLER_LEVELS_MODULE, page);
    sink = result;
    __asm__ volatile("" ::: "memory");
    return result + 1;
}

static void *thread_main(void *unused)
{
    (void)unused;
    /* One level more: thread_main, start_thread and __clone3 stand for
     * main, libc's two start-up frames and _start (the library's thread
     * start tail-calls thread_main, so it has no frame): 30 frames again. */
    descend(HANDLER_LEVELS_EXE + 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (page = handler_page_map(atoi(argv[1]))) == NULL)
        return 2;
    page->main_ns = now_ns();
    const char *mode = argv[2];
    if (strcmp(mode, "none") != 0) {
        const char *options = strcmp(mode, "json") == 0 ? "format=json" : "format=text";
        if (backtrace_install_fatal_handler(options) != 0)
            return 3;
        backtrace_set_crash_callback(on_crash, NULL);
    }
    page->fault_address = 64; /* in the unmapped first page */
    if (strcmp(mode, "thread") == 0) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, thread_main, NULL) != 0)
            return 5;
        pthread_join(thread, NULL);
    } else {
        descend(HANDLER_LEVELS_EXE);
    }
    return 4; /* not reached: the write faults */
}
