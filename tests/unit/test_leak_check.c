/* The leak check by reachability (leak_check=1, backtrace_heap_leak_check),
 * for real: tests/fixtures/leak_program.c and leak_program_cxx.cpp run
 * under libexecinfo_ex_hooks.so, and the same sources under the two
 * references, LeakSanitizer (the same source built with gcc
 * -fsanitize=leak) and valgrind --leak-check=full (the same binary).
 * tests/tools/leak_sites.py holds the three reports side by side: per
 * allocation site, our direct and indirect bytes and objects must be
 * LSan's, their sum valgrind's definitely plus indirectly lost, and the
 * JSON report must say what the text says. No expected number is written
 * here where a reference tool can say it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "support.h"

static char work[256];

static void make_work_dir(void)
{
    snprintf(work, sizeof work, "/tmp/execinfo_ex_leak_check_%d", (int)getpid());
    mkdir(work, 0700);
}

static void remove_work_dir(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf %s", work);
    system(command);
}

TestSuite(leak_check, .init = make_work_dir, .fini = remove_work_dir);

enum tool { OURS, OURS_JSON, LSAN, VALGRIND };

struct run {
    enum tool tool;
    const char *options;        /* more EXECINFO_EX_OPTIONS for ours */
    const char *report;         /* stderr goes here */
};

static void prepare(void *context)
{
    const struct run *run = context;
    unsetenv("LD_PRELOAD");
    unsetenv("EXECINFO_EX_OPTIONS");
    if (run->tool == OURS || run->tool == OURS_JSON) {
        char library[512], options[512];
        snprintf(library, sizeof library, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
        snprintf(options, sizeof options, "leak_check=1%s%s%s",
                 run->tool == OURS_JSON ? ":format=json" : "", run->options ? ":" : "",
                 run->options ? run->options : "");
        setenv("LD_PRELOAD", library, 1);
        setenv("EXECINFO_EX_OPTIONS", options, 1);
    }
    /* LSan's default fast unwinder stops at the first frame without a
     * frame pointer (libstdc++'s): its sites would be cut short. */
    const char *lsan = getenv("LSAN_OPTIONS_OVERRIDE");
    setenv("LSAN_OPTIONS", lsan != NULL ? lsan : "fast_unwind_on_malloc=0", 1);
    int fd = open(run->report, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0)
        _exit(126);
}

/* Run PROGRAM (leak_program, leak_program_cxx) with SCENARIOS under TOOL;
 * its stderr into WORK/NAME. */
static void run_under(enum tool tool, const char *program, const char *const *scenarios,
                      const char *options, const char *name, struct child_result *result)
{
    static char path[512], binary[512], report[512];
    snprintf(binary, sizeof binary, "%s/%s%s", getenv("EXECINFO_EX_TESTS"), program,
             tool == LSAN ? "_lsan" : "");
    snprintf(report, sizeof report, "%s/%s", work, name);
    char *argv[16];
    int argc = 0;
    if (tool == VALGRIND) {
        argv[argc++] = "valgrind";
        argv[argc++] = "--leak-check=full";
        argv[argc++] = "--show-leak-kinds=definite,indirect";
    }
    argv[argc++] = binary;
    for (int i = 0; scenarios[i] != NULL; i++)
        argv[argc++] = (char *)scenarios[i];
    argv[argc] = NULL;
    snprintf(path, sizeof path, "%s", tool == VALGRIND ? "/usr/bin/valgrind" : binary);
    struct run run = { tool, options, report };
    run_program(path, argv, prepare, &run, result);
}

static char *read_report(const char *name)
{
    static char text[1 << 20];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", work, name);
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file, "%s", path);
    size_t length = fread(text, 1, sizeof text - 1, file);
    text[length] = '\0';
    fclose(file);
    return text;
}

/* Every tool on the same scenarios; the three reports must agree. */
static void assert_tools_agree(const char *program, const char *const *scenarios,
                               const char *sources)
{
    static struct child_result result;
    run_under(OURS, program, scenarios, NULL, "ours.txt", &result);
    assert_exited_with(&result, 0); /* the program's own status is kept */
    run_under(OURS_JSON, program, scenarios, NULL, "ours.json", &result);
    assert_exited_with(&result, 0);
    run_under(LSAN, program, scenarios, NULL, "lsan.txt", &result);
    cr_assert(WIFEXITED(result.status), "LSan: status 0x%x", result.status);
    run_under(VALGRIND, program, scenarios, NULL, "valgrind.txt", &result);
    assert_exited_with(&result, 0);
    char command[2048];
    snprintf(command, sizeof command,
             "python3 %s/../tests/tools/leak_sites.py --sources %s --ours %s/ours.txt "
             "--json %s/ours.json --lsan %s/lsan.txt --valgrind %s/valgrind.txt 2>&1",
             getenv("EXECINFO_EX_BUILD"), sources, work, work, work, work);
    static char verdict[1 << 16];
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(verdict, 1, sizeof verdict - 1, pipe);
    verdict[length] = '\0';
    int status = pclose(pipe);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the tools disagree:\n%s\nours:\n%s", verdict, read_report("ours.txt"));
}

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

static void assert_not_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) == NULL, "'%s' in:\n%s", needle, text);
}

#define SCENARIOS(...) ((const char *const[]){ __VA_ARGS__, NULL })

Test(leak_check, direct_and_indirect_leaks_are_lsans_and_valgrinds, .timeout = 120)
{
    assert_tools_agree("leak_program", SCENARIOS("blocks", "list"), "leak_program.c");
    const char *ours = read_report("ours.txt");
    assert_in(ours, "*** execinfo_ex: leak check: detected memory leaks\n");
    assert_in(ours, "Direct leak of ");
    assert_in(ours, "Indirect leak of ");
    assert_in(ours, "SUMMARY: execinfo_ex: ");
    /* Grouped by allocation stack, frames with file:line. */
    assert_in(ours, "(lost_block+");
    assert_in(ours, "leak_program.c:");
    /* Direct before indirect. */
    cr_assert_lt(strstr(ours, "Direct leak"), strstr(ours, "Indirect leak"), "%s", ours);
}

Test(leak_check, a_leaked_cycle_is_all_indirect_as_in_lsan, .timeout = 120)
{
    assert_tools_agree("leak_program", SCENARIOS("cycle"), "leak_program.c");
    const char *ours = read_report("ours.txt");
    assert_in(ours, "Indirect leak of ");
    assert_not_in(ours, "Direct leak of ");
}

/* A block kept only where the scenario says: no tool reports it. */
static void assert_kept(const char *scenario, const char *site)
{
    assert_tools_agree("leak_program", SCENARIOS(scenario), "leak_program.c,leak_module.c");
    const char *ours = read_report("ours.txt");
    assert_in(ours, "*** execinfo_ex: leak check: no leaks\n");
    assert_not_in(ours, site);
    assert_not_in(ours, "SUMMARY");
}

Test(leak_check, a_block_reachable_only_from_a_global_is_kept, .timeout = 120)
{
    assert_kept("global", "global_block");
}

Test(leak_check, a_block_reachable_only_by_an_interior_pointer_is_kept, .timeout = 120)
{
    assert_kept("interior", "interior_block");
}

Test(leak_check, a_block_reachable_only_from_a_thread_variable_is_kept, .timeout = 120)
{
    assert_kept("tls", "tls_block");
}

Test(leak_check, a_block_reachable_only_from_another_threads_stack_is_kept, .timeout = 120)
{
    assert_kept("thread_stack", "thread_stack_block");
}

Test(leak_check, a_block_reachable_only_from_another_threads_register_is_kept, .timeout = 120)
{
    assert_kept("register", "register_block");
}

Test(leak_check, a_block_reachable_only_from_a_dlopened_modules_thread_variable_is_kept,
     .timeout = 120)
{
    char scenario[512];
    snprintf(scenario, sizeof scenario, "module_tls=%s/leak_module.so", getenv("EXECINFO_EX_TESTS"));
    assert_kept(scenario, "module_keep_in_tls");
}

Test(leak_check, every_scenario_at_once, .timeout = 180)
{
    char scenario[512];
    snprintf(scenario, sizeof scenario, "module_tls=%s/leak_module.so", getenv("EXECINFO_EX_TESTS"));
    assert_tools_agree("leak_program",
                       SCENARIOS("blocks", "list", "cycle", "global", "interior", "tls",
                                 "thread_stack", scenario),
                       "leak_program.c,leak_module.c");
}

Test(leak_check, a_leaked_std_map_of_strings_is_lsans_and_valgrinds, .timeout = 120)
{
    assert_tools_agree("leak_program_cxx", SCENARIOS("map"), "leak_program_cxx.cpp");
    const char *ours = read_report("ours.txt");
    /* Demangled, with the inlined frames of the map's code. */
    assert_in(ours, "filled_map(int)");
    assert_in(ours, "    inlined: std::");
}

Test(leak_check, the_call_returns_the_leaked_blocks_it_reports, .timeout = 60)
{
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("blocks", "global", "check_now"), "leak_check=0",
              "ours.txt", &result);
    assert_exited_with(&result, 0);
    const char *report = read_report("ours.txt");
    unsigned long bytes, objects;
    const char *summary = strstr(report, "SUMMARY: execinfo_ex: ");
    cr_assert_not_null(summary, "%s", report);
    cr_assert_eq(sscanf(summary, "SUMMARY: execinfo_ex: %lu byte(s) leaked in %lu allocation(s).",
                        &bytes, &objects), 2, "%s", summary);
    char expected[64];
    snprintf(expected, sizeof expected, "leaked=%lu\n", objects);
    cr_assert_str_eq(result.output, expected, "report:\n%s", report);
    cr_assert_gt(objects, 0);
    /* leak_check=0: no second report at exit. */
    cr_assert_eq(count_of(report, "*** execinfo_ex: leak check:"), 1, "%s", report);
}

Test(leak_check, without_recording_the_call_fails_with_enosys, .timeout = 60)
{
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("blocks", "check_now"), "heap=0", "ours.txt",
              &result);
    assert_exited_with(&result, 0);
    cr_assert_str_eq(result.output, "leaked=-1 (Function not implemented)\n");
    assert_not_in(read_report("ours.txt"), "leak check");
}

Test(leak_check, leak_exitcode_sets_the_status_only_when_leaks_are_found, .timeout = 60)
{
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("blocks"), "leak_exitcode=23", "ours.txt", &result);
    assert_exited_with(&result, 23);
    run_under(OURS, "leak_program", SCENARIOS("global"), "leak_exitcode=23", "ours.txt", &result);
    assert_exited_with(&result, 0);
}

Test(leak_check, an_ignored_block_is_neither_reported_nor_counted, .timeout = 60)
{
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("ignored"), NULL, "ours.txt", &result);
    assert_exited_with(&result, 0);
    const char *ours = read_report("ours.txt");
    assert_in(ours, "*** execinfo_ex: leak check: no leaks\n");
    assert_not_in(ours, "ignored_block");
}

Test(leak_check, a_thread_that_cannot_be_stopped_is_scanned_as_it_is_and_named, .timeout = 60)
{
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("unstoppable"), NULL, "ours.txt", &result);
    assert_exited_with(&result, 0);
    const char *ours = read_report("ours.txt");
    assert_in(ours, " thread(s) could not be stopped and were scanned as they ran");
    assert_in(ours, "(blocks every signal)");
    /* Its stack was scanned from where the kernel shows it blocked. */
    assert_in(ours, "*** execinfo_ex: leak check: no leaks\n");
    assert_not_in(ours, "without their stack");
}

/* Threads allocate and free without pause while the main thread checks,
 * again and again: a block in flight (in a stopped thread's registers,
 * half handed out, being freed) is never a leak, and every check ends. */
Test(leak_check, checks_among_threads_that_allocate_and_free_find_no_leak, .timeout = 120)
{
    static struct child_result result;
    run_under(OURS, "leak_churn", SCENARIOS("8", "200"), "leak_check=0", "ours.txt", &result);
    assert_exited_with(&result, 0);
    cr_assert_eq(count_of(result.output, ": 0\n"), 200, "%s\n%s", result.output,
                 read_report("ours.txt"));
    assert_in(result.output, "done\n");
    const char *report = read_report("ours.txt");
    cr_assert_eq(count_of(report, "*** execinfo_ex: leak check: no leaks"), 200, "%s", report);
    assert_not_in(report, "could not be stopped");
}

/* ---- execinfo_ex_heap ---- */

static void prepare_tool(void *context)
{
    char library[512];
    snprintf(library, sizeof library, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
    unsetenv("LD_PRELOAD");
    unsetenv("EXECINFO_EX_OPTIONS");
    setenv("EXECINFO_EX_HOOKS_LIBRARY", library, 1);
    (void)context;
}

/* execinfo_ex_heap FLAG [FLAG2] PROGRAM SCENARIO, everything into RESULT. */
static void run_tool(const char *flag, const char *flag2, const char *program,
                     const char *scenario, struct child_result *result)
{
    char tool[512], binary[512];
    snprintf(tool, sizeof tool, "%s/bin/execinfo_ex_heap", getenv("EXECINFO_EX_BUILD"));
    snprintf(binary, sizeof binary, "%s/%s", getenv("EXECINFO_EX_TESTS"), program);
    char *argv[8];
    int argc = 0;
    argv[argc++] = tool;
    argv[argc++] = (char *)flag;
    if (flag2 != NULL)
        argv[argc++] = (char *)flag2;
    argv[argc++] = binary;
    argv[argc++] = (char *)scenario;
    argv[argc] = NULL;
    run_program(tool, argv, prepare_tool, NULL, result);
}

Test(leak_check, the_command_checks_for_leaks_and_keeps_the_status, .timeout = 60)
{
    static struct child_result result;
    run_tool("--leak-check", NULL, "leak_program", "blocks", &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "*** execinfo_ex: leak check: detected memory leaks\n");
    assert_in(result.output, "(lost_block+");
    run_tool("--leak-check", NULL, "leak_program", "global", &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "*** execinfo_ex: leak check: no leaks\n");
}

Test(leak_check, error_exitcode_follows_a_leak_or_a_heap_error, .timeout = 60)
{
    static struct child_result result;
    run_tool("--leak-check", "--error-exitcode=7", "leak_program", "blocks", &result);
    assert_exited_with(&result, 7);
    run_tool("--leak-check", "--error-exitcode=7", "leak_program", "global", &result);
    assert_exited_with(&result, 0);
    /* A heap error: the program goes on (no SIGABRT), then ends with it. */
    run_tool("--error-exitcode=9", NULL, "heap_misuse", "double_free", &result);
    assert_exited_with(&result, 9);
    assert_in(result.output, "*** execinfo_ex: heap error: double-free");
}

/* ---- suppressions ---- */

/* The "Suppressions used:" table's rows, from its header to its rule. */
static void suppression_rows(const char *report, char *rows, size_t size)
{
    const char *table = strstr(report, "Suppressions used:\n");
    cr_assert_not_null(table, "no table in:\n%s", report);
    table = strchr(table + strlen("Suppressions used:\n"), '\n') + 1; /* past the header */
    const char *end = strstr(table, "----------");
    cr_assert_not_null(end, "%s", report);
    snprintf(rows, size, "%.*s", (int)(end - table), table);
}

Test(leak_check, suppressions_in_lsans_format_give_lsans_table, .timeout = 120)
{
    char path[512];
    snprintf(path, sizeof path, "%s/leaks.supp", work);
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs("# what the test keeps out\nleak:lost_block\nleak:^cycle_node$\n", file);
    fclose(file);
    char ours_options[600], lsan_options[600];
    snprintf(ours_options, sizeof ours_options, "suppressions=%s", path);
    snprintf(lsan_options, sizeof lsan_options,
             "fast_unwind_on_malloc=0:print_suppressions=1:suppressions=%s", path);
    static struct child_result result;
    run_under(OURS, "leak_program", SCENARIOS("blocks", "list", "cycle"), ours_options,
              "ours.txt", &result);
    assert_exited_with(&result, 0);
    setenv("LSAN_OPTIONS_OVERRIDE", lsan_options, 1);
    run_under(LSAN, "leak_program", SCENARIOS("blocks", "list", "cycle"), NULL, "lsan.txt",
              &result);
    unsetenv("LSAN_OPTIONS_OVERRIDE");
    char ours_rows[1024], lsan_rows[1024];
    suppression_rows(read_report("ours.txt"), ours_rows, sizeof ours_rows);
    suppression_rows(read_report("lsan.txt"), lsan_rows, sizeof lsan_rows);
    cr_assert_str_eq(ours_rows, lsan_rows, "ours:\n%s\nLSan:\n%s", ours_rows, lsan_rows);
    const char *ours = read_report("ours.txt");
    assert_not_in(ours, "lost_block+");
    assert_not_in(ours, "cycle_node+");
    assert_in(ours, "list_node+");
}
