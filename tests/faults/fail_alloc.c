/* fail_alloc.c: LD_PRELOAD shim for the sweep of a whole program (the leak
 * tool): malloc and its family over glibc's, with fault_core.h's
 * countdown armed from this library's constructor to the end.
 *   FAULT_FAIL_AT=N   the Nth allocation fails (0 or unset: count only)
 *   FAULT_REPORT=PATH at exit: "COUNT FIRED LIVE\n" (allocations made since
 *                     the constructor, 1 if the failure was injected, live
 *                     blocks at exit less those live at the constructor)
 * The failed allocation's caller is written on stderr ("fault: failed the
 * allocation of MODULE+0xOFFSET"; for libc's tsearch or strdup, the frame
 * that called it), and a crash's place ("fault: crashed in ..."): the
 * first frame outside libc and this shim, by glibc's backtrace (loaded at
 * the constructor, so that it does not allocate then). */
#define _GNU_SOURCE
#define FAULT_REPLACE_MALLOC
#define FAULT_WITH_GLIBC_BACKTRACE
#include <execinfo.h>

#include "fault_core.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static long live_at_start;

static int in_this_shim(const void *address)
{
    Dl_info info;
    static Dl_info self;
    if (self.dli_fbase == NULL)
        dladdr((void *)in_this_shim, &self);
    return dladdr((void *)address, &info) != 0 && info.dli_fbase == self.dli_fbase;
}

static void on_crash(int signo, siginfo_t *siginfo, void *context)
{
    void *trace[32];
    (void)siginfo;
    atomic_store(&fault_armed, 0);
    int count = backtrace(trace, 32);
    /* glibc's backtrace from a handler: the handler, the trampoline, then
     * the interrupted frame; the faulting pc itself from the context. */
    const ucontext_t *uc = context;
    void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
    int i = 0;
    while (i < count && trace[i] != pc)
        i++;
    if (i == count) {
        trace[0] = pc;
        count = 1;
        i = 0;
    }
    for (; i < count; i++) {
        void *at = trace[i] == pc ? pc : (char *)trace[i] - 1;
        if (!fault_in_helper_library(at) && !in_this_shim(at)) {
            fault_note_where("crashed in", at);
            break;
        }
    }
    signal(signo, SIG_DFL);
    raise(signo);
}

__attribute__((constructor)) static void arm_at_start(void)
{
    void *warm[4];
    backtrace(warm, 4); /* loads libgcc_s now */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO;
    int signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        sigaction(signals[i], &action, NULL);
    const char *at = getenv("FAULT_FAIL_AT");
    live_at_start = fault_live_now();
    fault_arm(at ? atol(at) : 0);
}

__attribute__((destructor)) static void report_at_exit(void)
{
    long count = fault_disarm();
    const char *path = getenv("FAULT_REPORT");
    if (path == NULL)
        return;
    char text[96];
    int length = snprintf(text, sizeof text, "%ld %d %ld\n", count, atomic_load(&fault_fired),
                          fault_live_now() - live_at_start);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, text, (size_t)length) != length)
            length = 0;
        close(fd);
    }
}
