/* dump.c: a report of every thread without a crash, and the program runs
 * on: backtrace_dump_threads() from code, and dump_signal= (a kill -QUIT,
 * as Go and the JVM answer it).
 * World: signal-safe, but for the first call of backtrace_dump_threads
 * in a process with no fatal handler installed (it reads the options and
 * builds the index, both normal-world: dump_prepare).
 *
 * One dump at a time: a second, meanwhile, is refused with EBUSY (the
 * dump signal cannot nest: it is blocked in its own handler). A crash
 * during a dump is still reported: the crashing thread answers the dump's
 * request with its fault's context, and gathers on its own once the dump
 * has let the threads go. */
#define _GNU_SOURCE
#include "execinfo_ex.h"
#include "crash_facts.h"
#include "dump.h"
#include "handler.h"
#include "report_deliver.h"
#include "report_minidump.h"
#include "../base/environment.h"
#include "../symbolize/index.h"

#include <errno.h>
#include <stdatomic.h>
#include <ucontext.h>

static atomic_int dumping;
static struct crash_facts facts;    /* static: an alternate stack is small */
static struct thread_set threads;
static char output_buffer[4096];
static struct second_stage stage;

/* The options of the installed handler, or else the environment's (and
 * the index, built now if it never was). */
static void dump_prepare(struct options *options)
{
    struct handler_view view;
    handler_config_view(0, &view);
    if (view.options.frames > 0) { /* published: a handler is installed */
        *options = view.options;
        return;
    }
    *options = *environment_options();
    const struct index_snapshot *snapshot = index_acquire();
    index_release();
    if (snapshot == NULL)
        index_refresh(0);
}

struct minidump_call {
    const struct options *options;
    int json;
};

/* minidump=: a dump writes one too (as Breakpad's WriteMinidump, its
 * exception stream says DUMP_REQUESTED), while the threads are still
 * stopped, and the report names it. */
static void write_minidump(int fd, void *opaque)
{
    const struct minidump_call *call = opaque;
    report_minidump(fd, call->json, call->options, &facts,
                    call->options->threads > 1 ? &threads : NULL);
}

static int deliver(const struct options *options, int fd, int json)
{
    struct minidump_call call = { options, json };
    struct report_request request = {
        .options = options, .fd = fd, .json = json,
        .threads = &threads, .buffer = output_buffer, .buffer_size = sizeof output_buffer,
        .middle = write_minidump, .context = &call, .stage = &stage,
    };
    return report_deliver(&facts, &request);
}

__attribute__((visibility("default"), noinline))
int backtrace_dump_threads(int fd, unsigned flags)
{
    volatile int saved_errno = errno; /* across getcontext, which returns twice */
    if (fd < 0 || (flags & ~(unsigned)BACKTRACE_DUMP_JSON) != 0) {
        errno = fd < 0 ? EBADF : EINVAL;
        return -1;
    }
    if (atomic_exchange(&dumping, 1) != 0) {
        errno = EBUSY;
        return -1;
    }
    struct options options;
    ucontext_t context;
    dump_prepare(&options);
    int have_context = getcontext(&context) == 0;
    crash_collect_here(&facts, have_context ? &context : NULL, options.frames, 1);
    int result = deliver(&options, fd, (flags & BACKTRACE_DUMP_JSON) != 0);
    atomic_store(&dumping, 0);
    if (result < 0) {
        errno = -result;
        return -1;
    }
    errno = saved_errno;
    return result;
}

void dump_signal_handler(int signo, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    struct handler_view view;
    if (atomic_exchange(&dumping, 1) != 0)
        return; /* a dump under way already answers this one */
    handler_config_view(signo, &view);
    crash_collect(&facts, signo, info, ucontext, view.options.frames);
    facts.kind = REPORT_DUMP_SIGNAL;
    deliver(&view.options, -1, view.options.format == REPORT_JSON);
    atomic_store(&dumping, 0);
    errno = saved_errno;
}
