/* The heap hook layer, for real: tests/fixtures/heap_misuse (linked with
 * -lexecinfo_ex_hooks) misuses the heap in a child; each test checks how
 * it died and what the report names. Programs the team did not write run
 * with the library preloaded. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <dlfcn.h>
#include <signal.h>

#include "support.h"

struct misuse_environment {
    const char *options, *extra;
    int ignore_abort;
};

static void prepare_misuse(void *context)
{
    const struct misuse_environment *environment = context;
    unsetenv("LIBC_HOOKS_ENABLE");
    unsetenv("LIBC_HOOK_ENABLE");
    setenv("EXECINFO_EX_OPTIONS", environment->options != NULL ? environment->options : "", 1);
    if (environment->extra != NULL)
        putenv((char *)environment->extra);
    if (environment->ignore_abort)
        signal(SIGABRT, SIG_IGN);
}

static void run_misuse_with(const char *command, struct misuse_environment *environment,
                            struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/heap_misuse", getenv("EXECINFO_EX_TESTS"));
    char *argv[] = { program, (char *)command, NULL };
    run_program(program, argv, prepare_misuse, environment, result);
}

/* Run the fixture's COMMAND with OPTIONS in EXECINFO_EX_OPTIONS (and
 * EXTRA, "NAME=value" or NULL, in the environment); stdout and stderr
 * into RESULT. */
static void run_misuse(const char *command, const char *options, const char *extra,
                       struct child_result *result)
{
    struct misuse_environment environment = { options, extra, 0 };
    run_misuse_with(command, &environment, result);
}

/* The heap report's lines, up to its end marker. */
static const char *heap_report(const struct child_result *result)
{
    const char *report = strstr(result->output, "*** execinfo_ex: heap error: ");
    cr_assert_not_null(report, "no heap report:\n%s", result->output);
    const char *end = strstr(report, "*** end of heap report");
    cr_assert(end, "%s", report);
    /* No frame of the hooks library in any heap report (issue 25). */
    const char *hooks = strstr(report, "libexecinfo_ex_hooks");
    cr_assert(hooks == NULL || hooks > end, "a frame of the hooks library:\n%s", report);
    return report;
}

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

/* "*** allocated by thread N:" followed, before the next "***", by FUNCTION. */
static void assert_stack_names(const char *report, const char *title, const char *function)
{
    const char *stack = strstr(report, title);
    cr_assert_not_null(stack, "no '%s' in:\n%s", title, report);
    const char *next = strstr(stack + 4, "\n***");
    const char *name = strstr(stack, function);
    cr_assert(name != NULL && (next == NULL || name < next), "'%s' not under '%s':\n%s",
              function, title, report);
}

Test(hooks, heap_overflow_is_found_at_free_with_the_allocating_stack, .timeout = 60)
{
    static struct child_result result;
    run_misuse("overflow", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-buffer-overflow");
    assert_in(report, "(found at free)");
    assert_in(report, " of 24 bytes; the address is at offset 24 (past its end)");
    assert_stack_names(report, "*** here:", "(free_victim+");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    /* The fatal handler came with the library: abort's crash report follows. */
    assert_in(result.output, "fatal signal 6 (SIGABRT)");
}

Test(hooks, heap_underflow_is_found_at_free, .timeout = 60)
{
    static struct child_result result;
    run_misuse("underflow", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-buffer-underflow");
    assert_in(report, "offset -1 (before its start)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
}

Test(hooks, double_free_names_both_frees_and_the_allocation, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "double-free");
    assert_in(report, " of 40 bytes");
    assert_stack_names(report, "*** here:", "(free_again+");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    assert_stack_names(report, "*** freed by thread ", "(free_victim+");
}

/* The frame lines ("... [0x...]", not "    inlined: ...") of the stack
 * under TITLE, up to the next "***". */
static int stack_frame_count(const char *report, const char *title)
{
    const char *stack = strstr(report, title);
    cr_assert_not_null(stack, "no '%s' in:\n%s", title, report);
    int frames = 0;
    for (const char *line = strchr(stack, '\n'); line != NULL && strncmp(line + 1, "***", 3) != 0;
         line = strchr(line + 1, '\n')) {
        const char *end = strchrnul(line + 1, '\n');
        const char *address = strstr(line + 1, " [0x");
        frames += address != NULL && address < end && strncmp(line + 1, "    inlined: ", 13) != 0;
    }
    return frames;
}

/* free_frames=N: the free stack has N frames (0: the call site alone);
 * the allocation stack keeps heap_frames. */
Test(hooks, free_frames_bounds_the_free_stack, .timeout = 60)
{
    static const struct {
        const char *options;
        int frames;
    } cases[] = { { "free_frames=0", 1 }, { "free_frames=1", 1 }, { "free_frames=2", 2 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static struct child_result result;
        run_misuse("double_free", cases[i].options, NULL, &result);
        assert_died_by(&result, SIGABRT);
        const char *report = heap_report(&result);
        assert_stack_names(report, "*** freed by thread ", "(free_victim+");
        cr_assert_eq(stack_frame_count(report, "*** freed by thread "), cases[i].frames,
                     "%s:\n%s", cases[i].options, report);
        cr_assert_gt(stack_frame_count(report, "*** allocated by thread "), 2, "%s:\n%s",
                     cases[i].options, report);
    }
}

Test(hooks, a_write_after_free_is_found_at_eviction, .timeout = 60)
{
    static struct child_result result;
    run_misuse("use_after_free", "quarantine=64K", NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-use-after-free");
    assert_in(report, "(found at quarantine eviction)");
    assert_in(report, " of 32 bytes; the address is at offset 3 (inside it)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    assert_stack_names(report, "*** freed by thread ", "(free_victim+");
}

Test(hooks, free_of_a_pointer_never_allocated, .timeout = 60)
{
    static struct child_result result;
    run_misuse("invalid_free", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "invalid-free at 0x");
    assert_stack_names(report, "*** here:", "(free_again+");
}

Test(hooks, free_of_a_pointer_inside_a_block, .timeout = 60)
{
    static struct child_result result;
    run_misuse("interior_free", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "invalid-free-inside-block");
    assert_in(report, " of 64 bytes; the address is at offset 16 (inside it)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
}

Test(hooks, on_error_report_goes_on, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", "on_error=report", NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(heap_report(&result), "double-free");
}

Test(hooks, edge_cases_behave_as_glibc, .timeout = 60)
{
    static struct child_result result;
    run_misuse("edges", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    /* Recording: exactly what was asked for is usable (the guard follows). */
    assert_in(result.output, "usable(20)=20\n");
    run_misuse("edges", "heap=0", NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "usable(20)=24\n"); /* glibc's own answer */
}

/* heap=0 is glibc's calloc; recording, a fresh mmapped chunk is not
 * cleared again: the pages stay untouched (not resident). */
Test(hooks, a_large_calloc_touches_only_what_is_used, .timeout = 60)
{
    static struct child_result result;
    run_misuse("calloc_resident", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    run_misuse("calloc_resident", "heap=0", NULL, &result);
    assert_exited_with(&result, 0);
    run_misuse("calloc_resident", "alloc_fill=0xaa", NULL, &result);
    assert_exited_with(&result, 0);
    run_misuse("calloc_resident", NULL, "LIBC_HOOKS_ENABLE=1", &result);
    assert_exited_with(&result, 0);
}

Test(hooks, a_mistake_in_the_options_is_reported_once, .timeout = 60)
{
    static struct child_result result;
    run_misuse("edges", "bogus=1", NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert_eq(count_of(result.output, "unknown option 'bogus'"), 1, "%s", result.output);
}

Test(hooks, heap_0_is_a_pass_through, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", "heap=0", NULL, &result);
    /* No heap report: glibc's own check finds this one. */
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
    assert_died_by(&result, SIGABRT);
    assert_in(result.output, "free(): double free detected");
}

Test(hooks, hook_pointers_are_null_unless_enabled, .timeout = 60)
{
    static struct child_result result;
    run_misuse("hooks_are_null", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    run_misuse("hooks_are_null", NULL, "LIBC_HOOKS_ENABLE=0", &result);
    assert_exited_with(&result, 0);
}

Test(hooks, hook_pointers_follow_bionics_rules, .timeout = 60)
{
    static struct child_result result;
    run_misuse("hooks", NULL, "LIBC_HOOKS_ENABLE=1", &result);
    assert_exited_with(&result, 0);
    run_misuse("hooks", NULL, "LIBC_HOOK_ENABLE=1", &result);
    assert_exited_with(&result, 0);
    run_misuse("hooks", "heap=0", "LIBC_HOOKS_ENABLE=1", &result);
    assert_exited_with(&result, 0);
}

Test(hooks, eight_threads_trading_blocks, .timeout = 120)
{
    static struct child_result result;
    run_misuse("threads", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
}

Test(hooks, fork_with_allocations_in_flight, .timeout = 120)
{
    static struct child_result result;
    run_misuse("fork", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
}

/* ---- the heap asked about, and in crash reports ---- */

Test(hooks, describe_names_the_block_around_an_address, .timeout = 60)
{
    static struct child_result result;
    run_misuse("describe", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, " 6 bytes past the end of a live 24-byte block at 0x");
    assert_in(result.output, " is at offset 5 inside a live 24-byte block at 0x");
    assert_stack_names(result.output, "*** allocated by thread ", "(allocate_victim+");
}

/* Freed blocks wait in a per-thread batch before the quarantine's ring:
 * found there by describe, flushed at thread exit and in a fork child. */
Test(hooks, describe_names_a_block_just_freed_with_its_free_stack, .timeout = 60)
{
    static struct child_result result;
    run_misuse("describe_freed", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, " is at offset 4 inside a freed 40-byte block at 0x");
    assert_stack_names(result.output, "*** allocated by thread ", "(allocate_victim+");
    assert_stack_names(result.output, "*** freed by thread ", "(free_victim+");
}

Test(hooks, a_write_after_free_on_a_thread_that_exited_is_found_at_eviction, .timeout = 60)
{
    static struct child_result result;
    run_misuse("thread_exit_flush", "quarantine=64K", NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-use-after-free");
    assert_in(report, "(found at quarantine eviction)");
    assert_in(report, " of 32 bytes; the address is at offset 5 (inside it)");
    assert_stack_names(report, "*** freed by thread ", "(free_victim+");
}

Test(hooks, a_fork_child_evicts_the_blocks_other_threads_had_batched, .timeout = 60)
{
    static struct child_result result;
    run_misuse("fork_flush", "quarantine=64K", NULL, &result);
    assert_exited_with(&result, 128 + SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-use-after-free");
    assert_in(report, "(found at quarantine eviction)");
    assert_in(report, " of 32 bytes; the address is at offset 6 (inside it)");
    assert_stack_names(report, "*** freed by thread ", "(free_victim+");
}

Test(hooks, check_finds_a_damaged_guard_now, .timeout = 60)
{
    static struct child_result result;
    run_misuse("check", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "*** heap-buffer-overflow: live 24-byte block at 0x");
    assert_in(result.output, ", damaged at offset 25\n");
    assert_stack_names(result.output, "*** allocated by thread ", "(allocate_victim+");
}

Test(hooks, a_fault_near_a_block_names_it_in_the_crash_report, .timeout = 60)
{
    static struct child_result result;
    run_misuse("crash_near_block", NULL, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *report = strstr(result.output, "fatal signal 11 (SIGSEGV), code 2 (SEGV_ACCERR)");
    cr_assert_not_null(report, "%s", result.output);
    assert_in(report, "*** heap: the fault address\n");
    assert_in(report, " 8 bytes past the end of a live 24-byte block at 0x");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    assert_in(report, "*** end of report");
}

Test(hooks, a_crash_for_another_reason_still_shows_the_overflow, .timeout = 60)
{
    static struct child_result result;
    run_misuse("crash_after_overflow", NULL, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *report = strstr(result.output, "fatal signal 11 (SIGSEGV)");
    cr_assert_not_null(report, "%s", result.output);
    assert_in(report, "*** is in no heap block nor near one\n");
    assert_in(report, "*** heap-buffer-overflow: live 24-byte block at 0x");
    assert_in(report, ", damaged at offset 26\n");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
}

Test(hooks, describe_and_check_allocate_nothing, .timeout = 60)
{
    static struct child_result result;
    run_misuse("inspect_allocates_nothing", NULL, "LIBC_HOOKS_ENABLE=1", &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, " is at offset 3 inside a live 24-byte block");
}

/* ---- JSON ---- */

/* Parse TEXT with python's json module and assert CONDITION (a python
 * expression over the parsed object d) holds. */
static void assert_json(const char *text, const char *condition)
{
    char path[64], command[1024];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_heap_json_%d", (int)getpid());
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs(text, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys; d = json.load(open(\"%s\")); sys.exit(0 if (%s) else 1)'",
             path, condition);
    int status = system(command);
    unlink(path);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s not true of:\n%s", condition, text);
}

Test(hooks, json_heap_report_is_one_object_with_the_stacks, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", "format=json:on_error=report", NULL, &result);
    assert_exited_with(&result, 0);
    assert_json(result.output,
                "d[\"format\"] == \"execinfo_ex heap report 1\" and d[\"kind\"] == \"double-free\" "
                "and d[\"size\"] == 40 and d[\"offset\"] == 0 "
                "and d[\"here\"][\"frames\"][0][\"function\"] == \"free_again\" "
                "and d[\"allocated\"][\"frames\"][0][\"function\"] == \"allocate_victim\" "
                "and d[\"freed\"][\"frames\"][0][\"function\"] == \"free_victim\"");
}

/* The heap error goes into the crash report of the abort it raises: one
 * report, and in a report= file both parts together. */
Test(hooks, a_heap_error_is_part_of_the_aborts_crash_report, .timeout = 60)
{
    static struct child_result result;
    char path[96], options[160];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_heap_report_%d.txt", (int)getpid());
    snprintf(options, sizeof options, "report=%s", path);
    unlink(path);
    run_misuse("double_free", options, NULL, &result);
    assert_died_by(&result, SIGABRT);
    static char file[65536];
    FILE *in = fopen(path, "r");
    cr_assert_not_null(in, "no report file; the child wrote:\n%s", result.output);
    size_t length = fread(file, 1, sizeof file - 1, in);
    file[length] = '\0';
    fclose(in);
    unlink(path);
    /* The heap error leads, then the abort's own lines, its trace left out. */
    const char *crash = strstr(file, "(SIGABRT)");
    const char *heap = strstr(file, "*** execinfo_ex: heap error: double-free");
    const char *left_out = strstr(file, "*** backtrace: left out (the heap error above says where)");
    const char *end = strstr(file, "*** end of report");
    cr_assert(crash && heap && end && left_out && heap == file && heap < crash &&
              crash < left_out && left_out < end,
              "the heap error leading the abort's report:\n%s", file);
    cr_assert_null(strstr(file, "abort+"), "the abort's own trace:\n%s", file);
    assert_stack_names(heap, "*** freed by thread ", "(free_victim+");
    cr_assert_null(strstr(result.output, "heap error"), "nothing on stderr: %s", result.output);
}

/* The handler does not report an abort the program inherited as ignored:
 * the heap error must then be written on its own, not wait for it. */
Test(hooks, with_sigabrt_ignored_from_the_start_the_heap_report_is_written, .timeout = 60)
{
    static struct child_result result;
    struct misuse_environment environment = { NULL, NULL, 1 };
    run_misuse_with("double_free", &environment, &result);
    const char *report = heap_report(&result);
    assert_in(report, "double-free");
}

/* Its per-thread memory is mapped, not initial-exec TLS: a program may
 * dlopen the library (or one that links it). */
Test(hooks, the_library_can_be_dlopened, .timeout = 60)
{
    char path[512];
    snprintf(path, sizeof path, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(library, "%s", dlerror());
    cr_assert_not_null(dlsym(library, "malloc_get_state"));
}

Test(hooks, without_the_fatal_handler_the_heap_report_stands_alone, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", "handler=0", NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    cr_assert_null(strstr(result.output, "fatal signal"), "%s", result.output);
}

Test(hooks, json_crash_report_of_a_heap_error_has_it_as_a_member, .timeout = 60)
{
    static struct child_result result;
    run_misuse("double_free", "format=json", NULL, &result);
    assert_died_by(&result, SIGABRT);
    assert_json(result.output,
                "d[\"signal_name\"] == \"SIGABRT\" "
                "and d[\"heap_error\"][\"kind\"] == \"double-free\" "
                "and d[\"heap_error\"][\"here\"][\"frames\"][0][\"function\"] == \"free_again\" "
                "and d[\"heap_error\"][\"freed\"][\"frames\"][0][\"function\"] == \"free_victim\"");
}

Test(hooks, json_crash_report_has_the_heap_members, .timeout = 60)
{
    static struct child_result result;
    run_misuse("crash_near_block", "format=json", NULL, &result);
    assert_died_by(&result, SIGSEGV);
    assert_json(result.output,
                "d[\"heap_fault_block\"][\"kind\"] == \"near\" and d[\"heap_fault_block\"][\"size\"] == 24 "
                "and d[\"heap_fault_block\"][\"offset\"] == 32 "
                "and d[\"heap_fault_block\"][\"allocated\"][\"frames\"][0][\"function\"] == \"allocate_victim\" "
                "and d[\"heap_damaged\"] == []");
    run_misuse("crash_after_overflow", "format=json", NULL, &result);
    assert_died_by(&result, SIGSEGV);
    assert_json(result.output,
                "d[\"heap_fault_block\"] is None and len(d[\"heap_damaged\"]) == 1 "
                "and d[\"heap_damaged\"][0][\"kind\"] == \"heap-buffer-overflow\" "
                "and d[\"heap_damaged\"][0][\"offset\"] == 26");
}

/* ---- text and JSON: one set of facts, two renderers ---- */

/* Run COMMAND with OPTIONS twice, as text and with format=json, and check
 * with tests/tools/heap_report_facts.py that both say the same. */
static void assert_text_and_json_agree(const char *command, const char *options, int signo)
{
    static struct child_result text, json;
    char with_json[256];
    snprintf(with_json, sizeof with_json, "%s%sformat=json", options, options[0] ? ":" : "");
    run_misuse(command, options, NULL, &text);
    run_misuse(command, with_json, NULL, &json);
    if (signo != 0) {
        assert_died_by(&text, signo);
        assert_died_by(&json, signo);
    }
    static char verdict[1 << 14];
    cr_assert(heap_facts_agree(text.output, json.output, verdict, sizeof verdict),
              "%s: text and JSON differ:\n%s", command, verdict);
}

Test(hooks, text_and_json_heap_errors_carry_the_same_facts, .timeout = 120)
{
    static const char *const commands[] = {
        "double_free", "overflow", "underflow", "invalid_free", "interior_free",
        "interior_realloc", "stack_free", "global_free", "damaged_header",
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        assert_text_and_json_agree(commands[i], "on_error=report:exit_check=0", 0);
    assert_text_and_json_agree("use_after_free", "on_error=report:exit_check=0:quarantine=64K", 0);
    /* Inside the abort's crash report (the held error). */
    assert_text_and_json_agree("double_free", "", SIGABRT);
}

/* The crash handler's scan: the block at the fault and every damaged one,
 * a freed block with its free stack in both formats. */
Test(hooks, text_and_json_heap_scans_carry_the_same_facts, .timeout = 60)
{
    assert_text_and_json_agree("crash_in_freed_block", "", SIGSEGV);
    static struct child_result result;
    run_misuse("crash_in_freed_block", NULL, NULL, &result);
    const char *damaged = strstr(result.output, "*** heap-use-after-free: freed 8192-byte block");
    cr_assert_not_null(damaged, "%s", result.output);
    assert_stack_names(damaged, "*** freed by thread ", "(free_victim+");
}

/* Not a timing test: the block does not move while its real block has
 * room, and the guard that moved with it still catches an overflow. */
Test(hooks, realloc_grows_and_shrinks_in_place_with_the_guard_moved, .timeout = 60)
{
    static struct child_result result;
    run_misuse("realloc_in_place", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    run_misuse("realloc_in_place_overflow", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-buffer-overflow");
    assert_in(report, " of 24 bytes; the address is at offset 24 (past its end)");
    run_misuse("realloc_in_place_shrunk", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    report = heap_report(&result);
    assert_in(report, "heap-buffer-overflow");
    assert_in(report, " of 10 bytes; the address is at offset 10 (past its end)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
}

/* A write after free or an overflow of a block never freed, just before a
 * normal exit, is found at exit (the guards of live blocks and the fill of
 * the quarantine), and reported as at eviction; exit_check=0 turns it off. */
Test(hooks, bugs_just_before_exit_are_found_at_exit, .timeout = 60)
{
    static struct child_result result;
    run_misuse("write_after_free_then_exit", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-use-after-free");
    assert_in(report, "(found at exit)");
    assert_in(report, " of 32 bytes; the address is at offset 3 (inside it)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    assert_stack_names(report, "*** freed by thread ", "(free_victim+");
    run_misuse("overflow_then_exit", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    report = heap_report(&result);
    assert_in(report, "heap-buffer-overflow");
    assert_in(report, " of 24 bytes; the address is at offset 24 (past its end)");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    run_misuse("overflow_then_exit", "on_error=report", NULL, &result);
    assert_exited_with(&result, 0);
    assert_in(heap_report(&result), "(found at exit)");
    run_misuse("write_after_free_then_exit", "exit_check=0", NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
}

/* The heap error is in the report of the abort it raised, and not in the
 * report of a later crash of a program that recovered from that abort. */
Test(hooks, a_recovered_heap_error_is_not_in_the_next_crash_report, .timeout = 60)
{
    static struct child_result result;
    run_misuse("recover_then_crash", NULL, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *abort_report = strstr(result.output, "fatal signal 6 (SIGABRT)");
    const char *recovered = strstr(result.output, "*** recovered\n");
    cr_assert(abort_report != NULL && recovered != NULL && abort_report < recovered, "%s",
              result.output);
    /* The heap error leads the abort's report, before its first line. */
    const char *heap = strstr(result.output, "*** execinfo_ex: heap error: double-free");
    cr_assert(heap != NULL && heap < abort_report, "%s", result.output);
    const char *crash = strstr(recovered, "fatal signal 11 (SIGSEGV)");
    cr_assert_not_null(crash, "no report of the second crash:\n%s", result.output);
    cr_assert_null(strstr(crash, "heap error"), "the old heap error again:\n%s", crash);
}

/* ---- pointers that are no block: inside one, in a stack, in a module ---- */

Test(hooks, realloc_of_a_pointer_inside_a_block_is_reported, .timeout = 60)
{
    static struct child_result result;
    run_misuse("interior_realloc", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "invalid-free-inside-block");
    assert_in(report, "(found at realloc)");
    assert_in(report, " of 64 bytes; the address is at offset 32 (inside it)");
    assert_stack_names(report, "*** here:", "(realloc_again+");
    assert_stack_names(report, "*** allocated by thread ", "(allocate_victim+");
    run_misuse("misaligned_realloc", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    assert_in(heap_report(&result), "invalid-free at 0x");
}

Test(hooks, free_of_an_aligned_stack_or_global_address_is_reported, .timeout = 60)
{
    static struct child_result result;
    run_misuse("stack_free", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "invalid-free at 0x");
    assert_in(report, "*** not a heap block: the address is in the calling thread's stack\n");
    assert_stack_names(report, "*** here:", "(free_again+");
    cr_assert_null(strstr(result.output, "free(): invalid pointer"), "%s", result.output);
    run_misuse("global_free", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    report = heap_report(&result);
    assert_in(report, "*** not a heap block: the address is in the image of the main program\n");
    assert_stack_names(report, "*** here:", "(free_again+");
}

/* An overwritten header leaves the size unknown: said so, and null in JSON. */
Test(hooks, a_damaged_header_says_the_size_is_unknown, .timeout = 60)
{
    static struct child_result result;
    run_misuse("damaged_header", NULL, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *report = heap_report(&result);
    assert_in(report, "heap-metadata-damaged");
    assert_in(report, " of unknown size (its header is damaged); the address is at offset 0\n");
    cr_assert_null(strstr(report, "of 0 bytes"), "%s", report);
    run_misuse("damaged_header", "format=json:on_error=report", NULL, &result);
    assert_exited_with(&result, 0);
    assert_json(result.output, "d[\"kind\"] == \"heap-metadata-damaged\" and d[\"size\"] is None "
                               "and d[\"offset\"] == 0");
}

/* ---- programs nobody here wrote, preloaded ---- */

static void run_shell(const char *command, char *output, size_t capacity, int *status)
{
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(output, 1, capacity - 1, pipe);
    output[length] = '\0';
    *status = pclose(pipe);
}

Test(hooks, preloaded_sort_gives_the_same_output, .timeout = 120)
{
    static char plain[1 << 18], hooked[1 << 18];
    char command[1024];
    int status;
    const char *input = "seq 1 10000 | sed 's/$/ line/' | shuf --random-source=/dev/zero";
    snprintf(command, sizeof command, "%s | sort 2>&1", input);
    run_shell(command, plain, sizeof plain, &status);
    cr_assert_eq(status, 0);
    snprintf(command, sizeof command, "%s | LD_PRELOAD=%s/libexecinfo_ex_hooks.so sort 2>&1",
             input, getenv("EXECINFO_EX_BUILD"));
    run_shell(command, hooked, sizeof hooked, &status);
    cr_assert_eq(status, 0, "%s", hooked);
    cr_assert_str_eq(hooked, plain);
}

/* A plugin opened with RTLD_DEEPBIND frees what libc's strdup gave it: its
 * free binds to glibc's, which aborted on our block. The flag is dropped
 * with one line of warning; with heap=0 (glibc's blocks) it is kept. */
Test(hooks, a_deepbind_plugin_host_runs_unchanged, .timeout = 60)
{
    static char output[1 << 16];
    char command[1024];
    int status;
    const char *tests = getenv("EXECINFO_EX_TESTS");
    snprintf(command, sizeof command,
             "LD_PRELOAD=%s/libexecinfo_ex_hooks.so EXECINFO_EX_OPTIONS= %s/deepbind_host "
             "%s/deepbind_plugin.so 2>&1",
             getenv("EXECINFO_EX_BUILD"), tests, tests);
    run_shell(command, output, sizeof output, &status);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x:\n%s", status, output);
    assert_in(output, "plugin ran: 200\n");
    cr_assert_eq(count_of(output, "RTLD_DEEPBIND): the flag is dropped"), 1, "%s", output);
    snprintf(command, sizeof command,
             "LD_PRELOAD=%s/libexecinfo_ex_hooks.so EXECINFO_EX_OPTIONS=heap=0 %s/deepbind_host "
             "%s/deepbind_plugin.so 2>&1",
             getenv("EXECINFO_EX_BUILD"), tests, tests);
    run_shell(command, output, sizeof output, &status);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x:\n%s", status, output);
    assert_in(output, "plugin ran: 200\n");
    cr_assert_null(strstr(output, "RTLD_DEEPBIND"), "%s", output);
}

Test(hooks, preloaded_python_runs_to_completion, .timeout = 120)
{
    static char output[1 << 16];
    char command[1024];
    int status;
    snprintf(command, sizeof command,
             "PYTHONMALLOC=malloc LD_PRELOAD=%s/libexecinfo_ex_hooks.so python3 -c '"
             "d = {str(i): [str(j) * 3 for j in range(i %% 50)] for i in range(20000)}\n"
             "print(sum(len(v) for v in d.values()))' 2>&1",
             getenv("EXECINFO_EX_BUILD"));
    run_shell(command, output, sizeof output, &status);
    cr_assert_eq(status, 0, "%s", output);
    cr_assert_str_eq(output, "490000\n");
}
