/* install.c: backtrace_install_fatal_handler and its LD_PRELOAD twin.
 * World: normal (options parsing, mmap, a mutex, the index build).
 *
 * Installing builds the symbol index first, so that the handler only
 * reads; gives the calling thread an alternate signal stack if it has
 * none, so that a stack overflow still gets its report; and remembers
 * every previous action, for chaining and for uninstalling. */
#define _GNU_SOURCE
#include "execinfo_ex.h"
#include "handler.h"
#include "../base/environment.h"
#include "../base/fd_write.h"
#include "../symbolize/index.h"
#include "../unwind/stack_walk.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Enough for the report (about 5 KiB) on top of the kernel's frame, with
 * room to spare for handlers we chain to. */
#define ALTERNATE_STACK_MINIMUM (64 * 1024)

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static void give_thread_an_alternate_stack(void)
{
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE))
        return; /* the program's own alternate stack is respected */
    long page = sysconf(_SC_PAGESIZE), minimum = sysconf(_SC_MINSIGSTKSZ);
    size_t size = ALTERNATE_STACK_MINIMUM;
    if (minimum > 0 && (size_t)minimum * 4 > size)
        size = (size_t)minimum * 4;
    char *memory = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED)
        return;
    mprotect(memory, (size_t)page, PROT_NONE); /* an overflow faults, not corrupts */
    stack_t stack = { .ss_sp = memory + page, .ss_size = size, .ss_flags = 0 };
    if (sigaltstack(&stack, NULL) != 0)
        munmap(memory, size + (size_t)page);
}

static int is_ours(const struct sigaction *action)
{
    return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == fatal_signal_handler;
}

static void install_signals(uint64_t signals)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = fatal_signal_handler;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    for (int signo = 1; signo < HANDLER_SIGNALS - 1; signo++) {
        if (!(signals & ((uint64_t)1 << signo)))
            continue;
        struct sigaction previous;
        if (sigaction(signo, &ours, &previous) != 0)
            continue;
        if (!is_ours(&previous))
            handler_config.previous[signo] = previous;
        handler_config.installed |= (uint64_t)1 << signo;
    }
}

static void report_bad_options(const char *error)
{
    size_t length = strlen(error);
    char line[320];
    if (length > sizeof line - 2)
        length = sizeof line - 2;
    memcpy(line, error, length);
    line[length] = '\n';
    fd_write_all(STDERR_FILENO, line, length + 1);
}

__attribute__((visibility("default")))
int backtrace_install_fatal_handler(const char *options)
{
    struct options parsed = *environment_options();
    char error[300];

    if (options_parse(&parsed, options, error, sizeof error) < 0) {
        report_bad_options(error);
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&install_lock);
    backtrace_refresh_index();
    stack_walk_remember_this_stack();
    give_thread_an_alternate_stack();
    handler_config.options = parsed;
    install_signals(parsed.signals);
    pthread_mutex_unlock(&install_lock);
    return 0;
}

__attribute__((visibility("default")))
void backtrace_uninstall_fatal_handler(void)
{
    pthread_mutex_lock(&install_lock);
    for (int signo = 1; signo < HANDLER_SIGNALS - 1; signo++) {
        if (!(handler_config.installed & ((uint64_t)1 << signo)))
            continue;
        struct sigaction current;
        /* Leave alone a handler someone installed over ours. */
        if (sigaction(signo, NULL, &current) == 0 && is_ours(&current))
            sigaction(signo, &handler_config.previous[signo], NULL);
        memset(&handler_config.previous[signo], 0, sizeof handler_config.previous[signo]);
    }
    handler_config.installed = 0;
    pthread_mutex_unlock(&install_lock);
}

/* LD_PRELOAD=libexecinfo_ex.so EXECINFO_EX_OPTIONS=handler=1 program */
__attribute__((constructor))
static void install_from_environment(void)
{
    if (environment_options()->handler)
        backtrace_install_fatal_handler(NULL);
}
