/* The hook layer's heap report, alone: a held heap error goes into one
 * crash report, not into every later one, and the renderers of a held
 * error and of one seen at the access (a guard page's fault). */
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

/* The faulting instruction of the access below: a function's first byte,
 * on the line its mark is on. */
__attribute__((noinline)) static int access_site(int x) { return x + 1; } /* @access_site */

struct render_call {
    const struct heap_error_facts *facts;
    int json;
};

static void render(int fd, void *context)
{
    const struct render_call *call = context;
    if (call->json)
        heap_error_json(fd, call->facts);
    else
        heap_error_text(fd, call->facts);
}

static struct heap_error_facts error_at_access(struct heap_access *access)
{
    *access = (struct heap_access){
        .what = { FAULT_ACCESS_READ, 8 }, .frames = { (void *)access_site }, .count = 1,
        .first_is_pc = 1,
    };
    return (struct heap_error_facts){
        .kind = HEAP_USE_AFTER_FREE, .address = 0x1008, .block = 0x1000, .size_known = 1,
        .size = 16, .offset = 8, .found = "at the access", .access = access, .pid = 1, .tid = 7,
    };
}

/* Seen at the access: what it did, then its stack, the faulting pc named
 * exactly (not as a return address, which would name the code before
 * it), and the SUMMARY names that line and function. */
Test(heap_report, an_error_at_the_access_leads_with_the_access_and_its_stack, .timeout = 30)
{
    struct heap_access access;
    struct heap_error_facts facts = error_at_access(&access);
    struct render_call call = { &facts, 0 };
    int line = marked_line("tests/unit/hooks_report.c", "@access_site");
    cr_assert_gt(line, 0);
    char *report = capture_output(render, &call);
    char frame[128], summary[160];
    snprintf(frame, sizeof frame, "(access_site+0) [0x%lx] at tests/unit/hooks_report.c:%d\n",
             (unsigned long)(uintptr_t)access_site, line);
    snprintf(summary, sizeof summary,
             "SUMMARY: execinfo_ex: heap-use-after-free tests/unit/hooks_report.c:%d in access_site\n",
             line);
    const char *headline = "*** execinfo_ex: heap error: heap-use-after-free at 0x1008 (found at "
                           "the access)\n*** READ of size 8\n*** block 0x1000 of 16 bytes; the "
                           "address is at offset 8 (inside it)\n*** pid 1, thread 7\n*** access by "
                           "thread 7:\n";
    cr_assert(strncmp(report, headline, strlen(headline)) == 0, "%s", report);
    const char *at_frame = strstr(report, frame), *at_summary = strstr(report, summary);
    cr_assert(at_frame != NULL && at_summary != NULL && at_frame < at_summary, "%s", report);
    cr_assert_null(strstr(report, "*** here:"), "%s", report);
    cr_assert_null(strstr(report, "*** found "), "said in words as if found by a check: %s", report);
    free(report);
}

Test(heap_report, an_error_at_the_access_in_json, .timeout = 30)
{
    struct heap_access access;
    struct heap_error_facts facts = error_at_access(&access);
    struct render_call call = { &facts, 1 };
    int line = marked_line("tests/unit/hooks_report.c", "@access_site");
    char *report = capture_output(render, &call);
    char frame[160];
    snprintf(frame, sizeof frame, "\"function\":\"access_site\",\"mangled\":\"access_site\","
             "\"offset\":\"0x0\",\"file\":\"tests/unit/hooks_report.c\",\"line\":%d}", line);
    cr_assert_not_null(strstr(report, "\"found\":\"at the access\""), "%s", report);
    cr_assert_not_null(strstr(report, "\"access\":{\"direction\":\"READ\",\"size\":8}"), "%s",
                       report);
    cr_assert_not_null(strstr(report, "\"access_stack\":{\"thread\":7,\"frames\":[{"), "%s",
                       report);
    cr_assert_not_null(strstr(report, frame), "%s\nnot in:\n%s", frame, report);
    cr_assert_not_null(strstr(report, "\"here\":null"), "%s", report);
    free(report);
}
