/* Heap reports a person reads in ten seconds (issue 25): issue 25's
 * vector write after free, found at exit with the default options, read
 * as ASan's report reads: the headline on line 1, freed by, allocated by,
 * a SUMMARY line, nothing twice, no frame of the hooks library, and the
 * abort the library raised for it without its own trace. And its read
 * after free caught by a guard page (guard_pages=1, the other options
 * the defaults), in the same order with the access stack first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include <signal.h>

#include "support.h"

#define HEADLINE "*** execinfo_ex: heap error: heap-use-after-free at 0x"
#define SUMMARY "SUMMARY: execinfo_ex: heap-use-after-free "
/* The push_back that freed the array, in process(): the freeing call. */
#define FREED_AT "vector_after_free.cpp:17 in process("

static void prepare(void *context)
{
    setenv("EXECINFO_EX_OPTIONS", (const char *)context, 1);
    /* Only the report: the program's own stdout is not under test. */
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
}

static void run_fixture(const char *name, const char *options, struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/%s", getenv("EXECINFO_EX_TESTS"), name);
    char *argv[] = { program, NULL };
    run_program(program, argv, prepare, (void *)options, result);
}

static void run_vector(const char *options, struct child_result *result)
{
    run_fixture("vector_after_free", options, result);
}

/* NEEDLE's place in TEXT, asserted found after AFTER. */
static const char *after(const char *text, const char *after_this, const char *needle)
{
    const char *found = strstr(after_this, needle);
    cr_assert_not_null(found, "'%s' missing or out of order in:\n%s", needle, text);
    return found + strlen(needle);
}

Test(heap_report, the_vector_write_after_free_reads_in_forty_lines, .timeout = 60)
{
    static struct child_result result;
    run_vector("", &result);
    assert_died_by(&result, SIGABRT);
    const char *text = result.output;
    cr_assert(strncmp(text, HEADLINE, strlen(HEADLINE)) == 0, "headline not on line 1:\n%s", text);
    cr_assert(count_lines(text) <= 40, "%d lines:\n%s", count_lines(text), text);
    const char *at = after(text, text, "(found at exit)\n");
    at = after(text, at, "*** found at exit");
    at = after(text, at, "*** freed by thread ");
    at = after(text, at, "*** allocated by thread ");
    at = after(text, at, SUMMARY);
    const char *summary_end = strchr(at, '\n');
    cr_assert(strstr(at, FREED_AT) != NULL && strstr(at, FREED_AT) < summary_end,
              "the summary names the freeing call:\n%s", text);
    at = after(text, at, "*** end of heap report\n");
    at = after(text, at, "fatal signal 6 (SIGABRT)");
    at = after(text, at, "*** backtrace: left out (the heap error above says where)\n");
    after(text, at, "*** end of report");
    /* Left out: the exit path, the hooks' frames, the abort's trace; and
     * the block is not listed a second time under the guard scan. */
    cr_assert_null(strstr(text, "*** here:"), "%s", text);
    cr_assert_null(strstr(text, "_dl_fini"), "%s", text);
    cr_assert_null(strstr(text, "libexecinfo_ex_hooks"), "%s", text);
    cr_assert_eq(count_of(text, "*** freed by thread "), 1, "%s", text);
    cr_assert_eq(count_of(text, "*** allocated by thread "), 1, "%s", text);
}

Test(heap_report, the_vector_write_after_free_in_json, .timeout = 60)
{
    static struct child_result result;
    run_vector("format=json", &result);
    assert_died_by(&result, SIGABRT);
    char path[64], command[1400];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_heap_report_json_%d", (int)getpid());
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs(result.output, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys\n"
             "d = json.load(open(\"%s\")); e = d[\"heap_error\"]\n"
             "frames = [f for k in (\"freed\", \"allocated\") for f in e[k][\"frames\"]]\n"
             "ok = (e[\"kind\"] == \"heap-use-after-free\" and e[\"found\"] == \"at exit\"\n"
             "  and e[\"here\"] is None and e[\"access\"] is None and e[\"access_stack\"] is None\n"
             "  and e[\"summary\"].startswith(\"heap-use-after-free \")\n"
             "  and \"%s\" in e[\"summary\"]\n"
             "  and d[\"backtrace_left_out\"] is True and d[\"frames\"] == []\n"
             "  and d[\"heap_damaged\"] == []\n"
             "  and not any(\"libexecinfo_ex_hooks\" in (f.get(\"module\") or \"\") for f in frames))\n"
             "sys.exit(0 if ok else 1)'",
             path, FREED_AT);
    int status = system(command);
    unlink(path);
    cr_assert_eq(status, 0, "%s", result.output);
}

/* guard_vector.cpp: the read of first.price after push_back freed the
 * array, on the line its source marks. */
Test(heap_report, the_vector_read_after_free_at_a_guard_page_reads_in_forty_lines, .timeout = 60)
{
    static struct child_result result;
    run_fixture("guard_vector", "guard_pages=1", &result);
    assert_died_by(&result, SIGSEGV);
    const char *text = result.output;
    cr_assert(strncmp(text, HEADLINE, strlen(HEADLINE)) == 0, "headline not on line 1:\n%s", text);
    cr_assert(count_lines(text) <= 40, "%d lines:\n%s", count_lines(text), text);
    int line = marked_line("tests/fixtures/guard_vector.cpp", "@access");
    cr_assert_gt(line, 0);
    char access_at[128], summary[256];
    snprintf(access_at, sizeof access_at, " at tests/fixtures/guard_vector.cpp:%d\n", line);
    snprintf(summary, sizeof summary,
             SUMMARY "tests/fixtures/guard_vector.cpp:%d in process(std::vector<Order, "
                     "std::allocator<Order> >&)\n", line);
    const char *at = after(text, text, "(found at the access)\n*** READ of size 8\n");
    at = after(text, at, "*** access by thread ");
    at = after(text, at, "\n");
    const char *frame0_end = strchr(at, '\n') + 1;
    cr_assert(strstr(at, access_at) == frame0_end - strlen(access_at),
              "the access stack's frame 0 is not the marked line %d:\n%s", line, text);
    at = after(text, at, "*** freed by thread ");
    at = after(text, at, "*** allocated by thread ");
    at = after(text, at, summary);
    at = after(text, at, "*** end of heap report\n");
    at = after(text, at, "fatal signal 11 (SIGSEGV)");
    at = after(text, at, "*** backtrace: left out (the heap error above says where)\n");
    after(text, at, "*** end of report");
    cr_assert_null(strstr(text, "libexecinfo_ex_hooks"), "%s", text);
    cr_assert_eq(count_of(text, "*** access by thread "), 1, "%s", text);
    cr_assert_eq(count_of(text, "*** freed by thread "), 1, "%s", text);
    cr_assert_eq(count_of(text, "*** allocated by thread "), 1, "%s", text);
}
