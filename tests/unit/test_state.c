/* malloc_get_state, malloc_state_size, malloc_set_state of the hooks
 * library, run inside tests/fixtures/state_program.c (which uses them on
 * its own heap) in child processes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static void no_options(void *unused)
{
    (void)unused;
    setenv("EXECINFO_EX_OPTIONS", "", 1);
}

static void run_state(const char *command, struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/state_program", getenv("EXECINFO_EX_TESTS"));
    char *argv[] = { program, (char *)command, NULL };
    run_program(program, argv, no_options, NULL, result);
}

Test(state, a_blob_restores_and_records_the_same_blocks_and_stacks, .timeout = 60)
{
    static struct child_result result;
    run_state("roundtrip", &result);
    assert_exited_with(&result, 0);
}

Test(state, every_changed_byte_and_every_truncation_is_refused, .timeout = 120)
{
    static struct child_result result;
    run_state("damage", &result);
    assert_exited_with(&result, 0);
}

Test(state, frees_of_blocks_the_restored_state_does_not_know_pass_through, .timeout = 60)
{
    static struct child_result result;
    run_state("after", &result);
    assert_exited_with(&result, 0);
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
}

Test(state, get_and_set_while_four_threads_allocate, .timeout = 120)
{
    static struct child_result result;
    run_state("threads", &result);
    assert_exited_with(&result, 0);
    cr_assert_null(strstr(result.output, "heap error"), "%s", result.output);
}

Test(state, a_blob_from_another_process_is_restored_with_its_stacks, .timeout = 60)
{
    static struct child_result result;
    run_state("foreign", &result);
    assert_exited_with(&result, 0);
}

/* A blob that is not one of our blocks (a file mapped back; any copy with
 * heap=0) whose total size lies: refused, not checksummed past its end. */
Test(state, a_blob_whose_size_lies_is_refused_not_read_past, .timeout = 60)
{
    char path[128], program[512], command[1200];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_state_%d_lying", (int)getpid());
    snprintf(program, sizeof program, "%s/state_program", getenv("EXECINFO_EX_TESTS"));
    snprintf(command, sizeof command, "EXECINFO_EX_OPTIONS= %s save %s", program, path);
    cr_assert_eq(system(command), 0);
    static const char *const modes[] = { "", "heap=0" };
    for (int i = 0; i < 2; i++) {
        snprintf(command, sizeof command, "EXECINFO_EX_OPTIONS=%s %s lying %s 2>&1", modes[i],
                 program, path);
        static char output[4096];
        FILE *pipe = popen(command, "r");
        size_t length = fread(output, 1, sizeof output - 1, pipe);
        output[length] = '\0';
        int status = pclose(pipe);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "options '%s': status 0x%x:\n%s",
                  modes[i], status, output);
        cr_assert(strstr(output, "lying sizes refused, sized too"), "%s", output);
    }
    unlink(path);
}

/* ---- the leak report tool on saved blobs ---- */

static int run_tool(const char *arguments, char *output, size_t size)
{
    char command[1024];
    snprintf(command, sizeof command, "%s/bin/execinfo_ex_leaks %s 2>&1", getenv("EXECINFO_EX_BUILD"),
             arguments);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(output, 1, size - 1, pipe);
    output[length] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void save_two(char *before, char *after, size_t size)
{
    snprintf(before, size, "/tmp/execinfo_ex_state_%d_before", (int)getpid());
    snprintf(after, size, "/tmp/execinfo_ex_state_%d_after", (int)getpid());
    char program[512], command[1200];
    snprintf(program, sizeof program, "%s/state_program", getenv("EXECINFO_EX_TESTS"));
    snprintf(command, sizeof command, "EXECINFO_EX_OPTIONS= %s save2 %s %s", program, before, after);
    cr_assert_eq(system(command), 0);
}

Test(state, the_tool_lists_a_blobs_blocks_and_the_difference_of_two, .timeout = 60)
{
    char before[128], after[128], arguments[300];
    static char output[1 << 16];
    save_two(before, after, sizeof before);
    snprintf(arguments, sizeof arguments, "%s", before);
    cr_assert_eq(run_tool(arguments, output, sizeof output), 1, "%s", output);
    cr_assert_eq(count_of(output, "#0 allocate_known at "), 3, "%s", output);
    cr_assert(strstr(output, "state_program.c:"), "file:line: %s", output);
    snprintf(arguments, sizeof arguments, "%s %s", before, after);
    cr_assert_eq(run_tool(arguments, output, sizeof output), 1, "%s", output);
    cr_assert_eq(count_of(output, "#0 allocate_later at "), 2, "%s", output);
    cr_assert_null(strstr(output, "allocate_known"), "only what is new: %s", output);
    cr_assert(strstr(output, "14000 bytes in 2 blocks"), "%s", output);
    snprintf(arguments, sizeof arguments, "--json %s %s", before, after);
    cr_assert_eq(run_tool(arguments, output, sizeof output), 1);
    char path[160], command[400];
    snprintf(path, sizeof path, "%s.json", after);
    FILE *file = fopen(path, "w");
    fputs(output, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json; d = json.load(open(\"%s\")); "
             "assert d[\"bytes\"] == 14000 and d[\"stacks\"][0][\"frames\"][0][\"function\"] == \"allocate_later\"'",
             path);
    cr_assert_eq(system(command), 0, "%s", output);
    unlink(path);
    unlink(before);
    unlink(after);
}

Test(state, the_tool_refuses_every_truncated_or_damaged_blob, .timeout = 120)
{
    char before[128], after[128], arguments[300], cut[160];
    static char output[1 << 16];
    save_two(before, after, sizeof before);
    FILE *file = fopen(before, "r");
    static unsigned char blob[1 << 20];
    size_t size = fread(blob, 1, sizeof blob, file);
    fclose(file);
    cr_assert_gt(size, 72u);
    snprintf(cut, sizeof cut, "%s.cut", before);
    snprintf(arguments, sizeof arguments, "%s", cut);
    /* Truncated anywhere past the magic (shorter is not a blob: a trace). */
    for (size_t length = 8; length < size; length += 1 + length / 64) {
        file = fopen(cut, "w");
        fwrite(blob, 1, length, file);
        fclose(file);
        cr_assert_eq(run_tool(arguments, output, sizeof output), 2, "cut at %zu: %s", length, output);
        cr_assert(strstr(output, "not an intact state blob"), "%s", output);
    }
    for (size_t at = 8; at < size; at += 1 + at / 32) {
        blob[at] ^= 0x40;
        file = fopen(cut, "w");
        fwrite(blob, 1, size, file);
        fclose(file);
        blob[at] ^= 0x40;
        cr_assert_eq(run_tool(arguments, output, sizeof output), 2, "byte %zu: %s", at, output);
    }
    unlink(cut);
    unlink(before);
    unlink(after);
}
