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

static void run_state(const char *command, struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/state_program", getenv("EXECINFO_EX_TESTS"));
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        setenv("EXECINFO_EX_OPTIONS", "", 1);
        execl(program, program, command, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    read_all(fds[0], result->output, sizeof result->output);
    close(fds[0]);
    cr_assert_eq(waitpid(child, &result->status, 0), child);
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

Test(state, a_blob_from_another_process_is_restored_with_its_stacks, .timeout = 60)
{
    static struct child_result result;
    run_state("foreign", &result);
    assert_exited_with(&result, 0);
}
