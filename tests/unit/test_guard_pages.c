/* Guard pages (guard_pages=1|before, sample=N), for real: the fixtures
 * (tests/fixtures/guard_access.c, guard_vector.cpp, linked with
 * -lexecinfo_ex_hooks) touch a guard page or a freed block's page in a
 * child; each test checks that it died by SIGSEGV at that access and that
 * the report leads its heap section with the right kind, at the right
 * function and line. READ/WRITE and the access size come from the fault
 * decoder (another part of issue 25) and are not asserted here. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <signal.h>

#include "support.h"

static void set_options(void *context)
{
    unsetenv("LIBC_HOOKS_ENABLE");
    setenv("EXECINFO_EX_OPTIONS", context, 1);
}

static void run_fixture(const char *options, char *const *arguments, struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/%s", getenv("EXECINFO_EX_TESTS"), arguments[0]);
    char *argv[8] = { program };
    for (int i = 1; i < 7 && arguments[i] != NULL; i++)
        argv[i] = arguments[i];
    run_program(program, argv, set_options, (void *)options, result);
}

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

/* Died by SIGSEGV; frame #0 is FUNCTION at the line the fixture printed
 * ("line FUNCTION N"); the heap section leads with "heap error: KIND"
 * found at the access. */
static void assert_fault_at_access(const struct child_result *result, const char *kind)
{
    assert_died_by(result, SIGSEGV);
    char function[64];
    int line;
    const char *said = strstr(result->output, "line ");
    cr_assert(said != NULL && sscanf(said, "line %63s %d", function, &line) == 2, "%s",
              result->output);
    const char *frame0 = strstr(result->output, "\n#0  ");
    cr_assert_not_null(frame0, "%s", result->output);
    const char *end = strchr(frame0 + 1, '\n');
    char where[128];
    snprintf(where, sizeof where, ":%d", line);
    cr_assert(strstr(frame0, function) != NULL && strstr(frame0, function) < end &&
                  strstr(frame0, where) != NULL && strstr(frame0, where) < end,
              "frame #0 is not %s at line %d:\n%s", function, line, result->output);
    char headline[128];
    snprintf(headline, sizeof headline, "*** execinfo_ex: heap error: %s at 0x", kind);
    const char *error = strstr(result->output, headline);
    cr_assert_not_null(error, "no '%s' in:\n%s", headline, result->output);
    assert_in(error, "(found at the access");
    assert_in(error, "*** allocated by thread ");
    /* First in the heap section: before the fault address's block walk. */
    const char *walk = strstr(result->output, "*** heap: guards of every block");
    cr_assert(walk == NULL || walk > error, "%s", result->output);
}

static const char *const sizes[] = { "1", "2", "4", "8", "16" };

static void each_size(const char *options, const char *where, const char *how, const char *kind)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_access", (char *)where, (char *)how, (char *)sizes[i], NULL };
        run_fixture(options, arguments, &result);
        assert_fault_at_access(&result, kind);
    }
}

Test(guard_pages, reads_past_the_end_fault_at_the_access, .timeout = 120)
{
    each_size("guard_pages=1", "overflow", "read", "heap-buffer-overflow");
}

Test(guard_pages, writes_past_the_end_fault_at_the_access, .timeout = 120)
{
    each_size("guard_pages=1", "overflow", "write", "heap-buffer-overflow");
}

Test(guard_pages, reads_before_the_start_fault_with_before, .timeout = 120)
{
    each_size("guard_pages=before", "underflow", "read", "heap-buffer-underflow");
}

Test(guard_pages, writes_before_the_start_fault_with_before, .timeout = 120)
{
    each_size("guard_pages=before", "underflow", "write", "heap-buffer-underflow");
}

Test(guard_pages, a_vector_reference_kept_across_push_back_faults_as_use_after_free, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_vector", NULL };
    run_fixture("guard_pages=1", arguments, &result);
    assert_fault_at_access(&result, "heap-use-after-free");
    const char *error = strstr(result.output, "heap error: heap-use-after-free");
    assert_in(error, "*** freed by thread ");
}

Test(guard_pages, sample_1000_finds_one_of_10000_reads_after_free, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_access", "uaf_loop", NULL };
    run_fixture("sample=1000:sample_seed=7", arguments, &result);
    assert_died_by(&result, SIGSEGV);
    const char *error = strstr(result.output, "*** execinfo_ex: heap error: heap-use-after-free");
    cr_assert_not_null(error, "%s", result.output);
    assert_in(error, "*** freed by thread ");
    assert_in(error, "uaf_loop");
    /* heap=0 otherwise: no other heap section. */
    cr_assert_null(strstr(result.output, "*** heap: guards of every block"), "%s", result.output);
}

Test(guard_pages, a_spent_budget_falls_back_to_ordinary_guards_said_once, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_access", "live", "50", NULL };
    run_fixture("guard_pages=1:guard_pages_budget=10", arguments, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "ok\n");
    cr_assert_eq(count_of(result.output, "guard_pages_budget"), 1, "%s", result.output);
}

Test(guard_pages, ordinary_use_is_unchanged, .timeout = 60)
{
    static const char *const options[] = { "guard_pages=1", "guard_pages=before",
                                           "sample=1:sample_seed=3", "heap=0" };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_access", "churn", NULL };
        run_fixture(options[i], arguments, &result);
        assert_exited_with(&result, 0);
        assert_in(result.output, "ok 14000 abcdefg\n");
        cr_assert_null(strstr(result.output, "heap error"), "%s: %s", options[i], result.output);
    }
}

/* The leak check's lines ("Direct leak of...", "Indirect leak of...") of
 * leak_program SCENARIO under OPTIONS, preloaded. */
static void leak_lines(const char *options, const char *scenario, char *lines, size_t capacity)
{
    static struct child_result result;
    char program[512];
    snprintf(program, sizeof program, "%s/leak_program", getenv("EXECINFO_EX_TESTS"));
    char preload[600];
    snprintf(preload, sizeof preload, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
    setenv("LD_PRELOAD", preload, 1);
    char *argv[] = { program, (char *)scenario, NULL };
    run_program(program, argv, set_options, (void *)options, &result);
    unsetenv("LD_PRELOAD");
    size_t used = 0;
    lines[0] = '\0';
    for (const char *line = result.output; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, "Direct leak", 11) == 0 || strncmp(line, "Indirect leak", 13) == 0) {
            cr_assert(used + length + 1 < capacity);
            memcpy(lines + used, line, length);
            used += length;
            lines[used++] = '\n';
            lines[used] = '\0';
        }
        line = end != NULL ? end + 1 : NULL;
    }
}

Test(guard_pages, guarded_blocks_are_in_the_leak_check, .timeout = 120)
{
    static char plain[8192], guarded[8192];
    static const char *const scenarios[] = { "list", "cycle", "global" };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        leak_lines("leak_check=1", scenarios[i], plain, sizeof plain);
        leak_lines("leak_check=1:guard_pages=1", scenarios[i], guarded, sizeof guarded);
        cr_assert_str_eq(guarded, plain, "%s", scenarios[i]);
    }
    cr_assert(strstr(plain, "Direct leak") == NULL); /* global: nothing leaked */
    leak_lines("leak_check=1:guard_pages=1", "list", guarded, sizeof guarded);
    cr_assert_not_null(strstr(guarded, "Indirect leak"), "%s", guarded);
}
