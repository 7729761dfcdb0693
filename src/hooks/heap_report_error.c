/* heap_report_error.c: what happens when the hook layer finds a heap
 * error: the stack that found it, then the report written or held for the
 * crash report of the abort that follows.
 * World: normal (it runs inside free, realloc or the exit check: it
 * captures a stack, thread_capture.c, and flushes the mtrace buffer,
 * mtrace.c). The report itself is written by the signal-safe
 * heap_report.c, which the crash handler also uses for a held error. */
#define _GNU_SOURCE
#include "heap_report.h"
#include "heap.h"
#include "mtrace.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

/* Our fatal handler is there to report the abort, with our section. */
static int crash_report_will_follow(void)
{
    struct sigaction action;
    return heap.crash_section_added && sigaction(SIGABRT, NULL, &action) == 0 &&
           (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == heap.fatal_handler;
}

_Atomic unsigned long heap_errors_reported;

void heap_report_error(const struct heap_error_facts *found)
{
    heap_errors_reported++;
    heap_busy++;
    mtrace_flush_now(); /* the trace up to the error, whatever follows */
    struct heap_error_facts facts = *found;
    facts.here = heap_capture(HEAP_CAPTURE_REPORT);
    facts.pid = (uint32_t)getpid();
    facts.tid = heap_thread_id();
    if (heap.options.on_error == HEAP_ERROR_ABORT && crash_report_will_follow()) {
        heap_report_hold(&facts);
        abort();
    }
    heap_report_write(&facts);
    heap_busy--;
    if (heap.options.on_error == HEAP_ERROR_ABORT)
        abort();
}
