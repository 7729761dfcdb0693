/* The hook layer's heap report, alone: a held heap error goes into one
 * crash report, not into every later one, and the renderers of a held
 * error. */
#define _GNU_SOURCE
#include "hooks/heap_report.h"
#include "execinfo_ex.h"

#include <stdio.h>

#include "support.h"

struct pending_call {
    int format;
};

static void write_pending(int fd, void *context)
{
    const struct pending_call *call = context;
    uintptr_t block;
    heap_report_pending(fd, call->format, 6, &block);
}

static struct heap_error_facts error_at(uintptr_t address)
{
    return (struct heap_error_facts){
        .kind = HEAP_DOUBLE_FREE, .address = address, .block = address, .size_known = 1,
        .size = 40, .found = "at free", .pid = 1, .tid = 1,
    };
}

/* A program whose SIGABRT handler recovers (a jump out of it) gets the
 * heap error in the abort's crash report only: the next crash report is
 * its own. A later heap error is held in its turn. */
Test(heap_report, a_held_error_is_reported_once, .timeout = 30)
{
    struct pending_call text = { 0 }, json = { BACKTRACE_REPORT_JSON };
    struct heap_error_facts first = error_at(0x1000), second = error_at(0x2000);
    heap_report_hold(&first);
    char *report = capture_output(write_pending, &text);
    cr_assert(strstr(report, "*** execinfo_ex: heap error: double-free at 0x1000"), "%s", report);
    free(report);
    report = capture_output(write_pending, &text);
    cr_assert_str_empty(report, "reported again: %s", report);
    free(report);
    heap_report_hold(&second);
    report = capture_output(write_pending, &json);
    cr_assert(strstr(report, ",\"heap_error\":{") && strstr(report, "\"address\":\"0x2000\""),
              "%s", report);
    free(report);
    report = capture_output(write_pending, &json);
    cr_assert_str_empty(report, "%s", report);
    free(report);
}

/* While one is held, the first error wins. */
Test(heap_report, the_first_held_error_wins, .timeout = 30)
{
    struct pending_call text = { 0 };
    struct heap_error_facts first = error_at(0x1000), second = error_at(0x2000);
    heap_report_hold(&first);
    heap_report_hold(&second);
    char *report = capture_output(write_pending, &text);
    cr_assert(strstr(report, "double-free at 0x1000") && !strstr(report, "0x2000"), "%s", report);
    free(report);
}
