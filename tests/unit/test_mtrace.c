/* mtrace() and muntrace() of the hooks library: glibc's contract, a trace
 * glibc's own mtrace script reads (file:line for a PIE), the refusals,
 * and whole lines under threads. The program traced is
 * tests/fixtures/mtrace_program.c, linked with -lexecinfo_ex_hooks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static char trace_path[128];

static void make_path(void)
{
    snprintf(trace_path, sizeof trace_path, "/tmp/execinfo_ex_mtrace_%d.trace", (int)getpid());
    unlink(trace_path);
}

static void remove_path(void)
{
    unlink(trace_path);
}

TestSuite(mtrace, .init = make_path, .fini = remove_path, .timeout = 60);

static const char *program_path(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/mtrace_program", getenv("EXECINFO_EX_TESTS"));
    return path;
}

struct trace_environment {
    const char *trace, *options;
};

static void prepare_trace(void *context)
{
    const struct trace_environment *environment = context;
    if (environment->trace != NULL)
        setenv("MALLOC_TRACE", environment->trace, 1);
    else
        unsetenv("MALLOC_TRACE");
    setenv("EXECINFO_EX_OPTIONS", environment->options != NULL ? environment->options : "", 1);
}

/* Run PROGRAM COMMAND with MALLOC_TRACE=TRACE (NULL: unset) and OPTIONS
 * in EXECINFO_EX_OPTIONS; its stdout and stderr into RESULT. */
static void run_traced(const char *program, const char *command, const char *trace,
                       const char *options, struct child_result *result)
{
    struct trace_environment environment = { trace, options };
    char *argv[] = { (char *)program, (char *)command, NULL };
    run_program(program, argv, prepare_trace, &environment, result);
}

static char *read_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return NULL;
    static char text[4 << 20];
    *length = fread(text, 1, sizeof text - 1, file);
    text[*length] = '\0';
    fclose(file);
    return text;
}

/* glibc's script, with the program for file:line. */
static void run_glibc_script(const char *program, const char *trace, char *output, size_t size)
{
    char command[1024];
    snprintf(command, sizeof command, "mtrace %s %s 2>&1", program, trace);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    size_t length = fread(output, 1, size - 1, pipe);
    output[length] = '\0';
    pclose(pipe);
}

/* The "FILE:LINE" the program printed twice: its malloc in a loop. */
static const char *loop_leak(const char *output)
{
    static char where[300];
    for (const char *line = strstr(output, "leak "); line != NULL; line = strstr(line + 1, "leak ")) {
        char needle[320];
        if (sscanf(line, "leak %255s", where) != 1)
            continue;
        snprintf(needle, sizeof needle, "leak %s\n", where);
        const char *first = strstr(output, needle);
        if (first != NULL && strstr(first + 1, needle) != NULL)
            return strrchr(where, '/') != NULL ? strrchr(where, '/') + 1 : where;
    }
    cr_assert_fail("no leak printed twice:\n%s", output);
    return NULL;
}

/* How many lines of TEXT end their "file:line" part with SUFFIX (the
 * script prints "at /abs/path/file.c:27 (discriminator 3)"). */
static int lines_at(const char *text, const char *suffix)
{
    int count = 0;
    size_t length = strlen(suffix);
    for (const char *at = strstr(text, suffix); at != NULL; at = strstr(at + 1, suffix))
        if (at[length] == '\n' || at[length] == ' ' || at[length] == '\0')
            count++;
    return count;
}

Test(mtrace, glibc_script_reads_the_trace_and_names_each_leak_by_line)
{
    static struct child_result result;
    run_traced(program_path(), "leaks", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    static char table[65536];
    run_glibc_script(program_path(), trace_path, table, sizeof table);
    cr_assert(strstr(table, "Memory not freed:"), "%s", table);
    /* Each "leak FILE:LINE" the program printed is in the table as often
     * as it was printed, and the table has no other line of that file. */
    int expected = 0;
    for (const char *line = strstr(result.output, "leak "); line != NULL;
         line = strstr(line + 1, "leak ")) {
        char where[256];
        cr_assert_eq(sscanf(line, "leak %255s", where), 1);
        int printed = 0;
        char needle[300];
        snprintf(needle, sizeof needle, "leak %s\n", where);
        for (const char *p = strstr(result.output, needle); p != NULL; p = strstr(p + 1, needle))
            printed++;
        cr_assert_eq(lines_at(table, where), printed, "%s in the table %d times, not %d:\n%s",
                     where, lines_at(table, where), printed, table);
        expected++;
    }
    cr_assert_eq(expected, 5, "the program printed %d leaks:\n%s", expected, result.output);
    cr_assert_eq(lines_at(table, loop_leak(result.output)), 2, "malloc twice on one line");
    int of_the_file = 0;
    for (const char *p = strstr(table, "mtrace_program.c:"); p != NULL;
         p = strstr(p + 1, "mtrace_program.c:"))
        of_the_file++;
    cr_assert_eq(of_the_file, expected, "no other leak of the program:\n%s", table);
    cr_assert_null(strstr(table, "was never alloc'd"), "%s", table);
}

/* Every line of TEXT one of the forms of docs/MTRACE.md. One assertion
 * for the whole text rather than three a line: each Criterion assertion
 * is a message to its runner, and the eight threads' trace has 32,000
 * lines. */
static void assert_well_formed(const char *text)
{
    regex_t form;
    cr_assert_eq(regcomp(&form,
                         "^(= (Start|End)|"
                         "@ ([^ ]+:)?\\[0x[0-9a-f]+\\] ([+>] 0x[0-9a-f]+ 0x[0-9a-f]+|[-<] 0x[0-9a-f]+|! 0x[0-9a-f]+ 0x[0-9a-f]+)|"
                         "# stack( ([^ ]+:)?\\[0x[0-9a-f]+\\])*)$",
                         REG_EXTENDED | REG_NOSUB), 0);
    const char *line = text, *why = NULL;
    int number = 1;
    static char copy[8192];
    while (*line != '\0' && why == NULL) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        if (length >= sizeof copy)
            length = sizeof copy - 1;
        memcpy(copy, line, length);
        copy[length] = '\0';
        if (end == NULL)
            why = "has no end";
        else if ((size_t)(end - line) >= sizeof copy)
            why = "is too long";
        else if (regexec(&form, copy, 0, NULL, 0) != 0)
            why = "is malformed";
        else
            line = end + 1, number++;
    }
    regfree(&form);
    cr_assert_null(why, "line %d %s: '%s'", number, why, copy);
}

/* Replays the trace: each "+" of a pointer not live, each "-" of a live
 * one, in file order. Returns how many blocks are left; asserts (once)
 * that no pointer was allocated twice or released before it was. */
static int replay_in_order(const char *text)
{
    static unsigned long live[1 << 16];
    int live_count = 0;
    const char *why = NULL;
    unsigned long pointer = 0;
    for (const char *line = text; line != NULL && *line != '\0' && why == NULL;) {
        char op, event[64] = "";
        const char *bracket = line[0] == '@' ? strchr(line, ']') : NULL;
        /* sscanf of a copy: glibc's measures the whole string it is
         * given, and the rest of a 2 MB trace at each line was minutes
         * under qemu-user. */
        if (bracket != NULL) {
            size_t length = strcspn(bracket + 1, "\n");
            memcpy(event, bracket + 1, length < sizeof event - 1 ? length : sizeof event - 1);
        }
        if (bracket != NULL && sscanf(event, " %c %lx", &op, &pointer) == 2) {
            int found = -1;
            for (int i = 0; i < live_count; i++)
                if (live[i] == pointer)
                    found = i;
            if ((op == '+' || op == '>') && found != -1)
                why = "allocated twice without a free";
            else if ((op == '+' || op == '>') && live_count == 1 << 16)
                why = "is past the test's table";
            else if (op == '+' || op == '>')
                live[live_count++] = pointer;
            else if ((op == '-' || op == '<') && found == -1)
                why = "released before it was allocated";
            else if (op == '-' || op == '<')
                live[found] = live[--live_count];
        }
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    cr_assert_null(why, "0x%lx %s", pointer, why);
    return live_count;
}

Test(mtrace, eight_threads_write_whole_lines_in_order)
{
    static struct child_result result;
    run_traced(program_path(), "threads", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    cr_assert_gt(length, 8 * 2000 * 20, "every event is there: %zu bytes", length);
    cr_assert(strncmp(text, "= Start\n", 8) == 0);
    cr_assert(length >= 6 && strcmp(text + length - 6, "= End\n") == 0);
    assert_well_formed(text);
    int allocations = count_of(text, " + ") + count_of(text, " > ");
    cr_assert_geq(allocations, 8 * 2000, "every thread's every allocation");
    /* The threads free all they allocate; what stays is the C library's
     * own (pthread_create's thread data, a few blocks). */
    int left = replay_in_order(text);
    cr_assert_lt(left, 16, "%d blocks left", left);
}

Test(mtrace, stack_lines_when_asked_and_the_script_still_reads_the_trace)
{
    static struct child_result result;
    run_traced(program_path(), "leaks", trace_path, "mtrace_frames=4", &result);
    assert_exited_with(&result, 0);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    assert_well_formed(text);
    cr_assert_gt(count_of(text, "# stack "), 5, "%s", text);
    cr_assert(strstr(text, "# stack /") != NULL, "frames with their module: %s", text);
    static char table[65536];
    run_glibc_script(program_path(), trace_path, table, sizeof table);
    cr_assert_eq(lines_at(table, loop_leak(result.output)), 2, "%s", table);
}

/* A program whose path is 2,000 bytes long: its stack lines cannot hold
 * every frame in the event's 8 KiB and lose the last ones, whole. */
Test(mtrace, stack_lines_too_long_lose_frames_not_their_form)
{
    char directory[4096] = "/tmp";
    char component[201];
    memset(component, 'd', 200);
    component[200] = '\0';
    snprintf(directory + strlen(directory), sizeof directory - strlen(directory),
             "/execinfo_ex_long_%d", (int)getpid());
    cr_assert_eq(mkdir(directory, 0700), 0);
    char top[4096];
    strcpy(top, directory);
    for (int i = 0; i < 9; i++) {
        strcat(directory, "/");
        strcat(directory, component);
        cr_assert_eq(mkdir(directory, 0700), 0, "%s", strerror(errno));
    }
    char program[4096 + 32], command[8300];
    snprintf(program, sizeof program, "%s/p", directory);
    snprintf(command, sizeof command, "cp %s %s", program_path(), program);
    cr_assert_eq(system(command), 0);
    static struct child_result result;
    run_traced(program, "leaks", trace_path, "mtrace_frames=64", &result);
    assert_exited_with(&result, 0);
    snprintf(command, sizeof command, "rm -rf %s", top);
    system(command);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    assert_well_formed(text);
    cr_assert_geq(count_of(text, "@ /tmp/execinfo_ex_long_"), 8, "the events are there");
    cr_assert_geq(count_of(text, "# stack /tmp/execinfo_ex_long_"), 8, "with their stacks");
    /* No stack line has all of main's frames in the program: at most 3
     * paths of 2,000 bytes fit in 8 KiB. */
    for (const char *line = strstr(text, "# stack"); line != NULL; line = strstr(line + 1, "# stack")) {
        const char *end = strchr(line, '\n');
        cr_assert_lt(end - line, 8192);
    }
}

/* A hook with a lock of its own: the trace's lock is never held across
 * it, so no lock-order deadlock with its malloc in another thread. */
Test(mtrace, hooks_with_their_own_lock_do_not_deadlock, .timeout = 60)
{
    static struct child_result result;
    run_traced(program_path(), "hooked", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert(strstr(result.output, "done"), "%s", result.output);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    assert_well_formed(text);
    cr_assert_geq(count_of(text, " > "), 5000, "the reallocs through the hook are traced");
}

Test(mtrace, a_child_after_fork_traces_into_the_same_file)
{
    static struct child_result result;
    run_traced(program_path(), "fork", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    assert_well_formed(text);
    cr_assert_eq(count_of(text, "= Start"), 1, "the parent's lines are not written twice: %s", text);
    cr_assert_geq(count_of(text, " - "), 2, "both frees of the shared block: %s", text);
}

Test(mtrace, the_file_is_truncated_when_opened)
{
    FILE *old = fopen(trace_path, "w");
    cr_assert_not_null(old);
    for (int i = 0; i < 1000; i++)
        fputs("stale line from an earlier run\n", old);
    fclose(old);
    static struct child_result result;
    run_traced(program_path(), "idle", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    size_t length;
    const char *text = read_file(trace_path, &length);
    cr_assert_not_null(text);
    cr_assert_null(strstr(text, "stale"), "%s", text);
    cr_assert(strncmp(text, "= Start\n", 8) == 0, "%s", text);
}

Test(mtrace, no_variable_an_unwritable_path_or_a_directory_trace_nothing)
{
    static struct child_result result;
    run_traced(program_path(), "leaks", NULL, NULL, &result);
    assert_exited_with(&result, 0);
    run_traced(program_path(), "leaks", "", NULL, &result);
    assert_exited_with(&result, 0);
    run_traced(program_path(), "leaks", "/nonexistent-directory/trace", NULL, &result);
    assert_exited_with(&result, 0);
    char directory[160];
    snprintf(directory, sizeof directory, "%s.d", trace_path);
    cr_assert_eq(mkdir(directory, 0700), 0);
    run_traced(program_path(), "leaks", directory, NULL, &result);
    assert_exited_with(&result, 0);
    struct stat status;
    cr_assert_eq(stat(directory, &status), 0);
    cr_assert(S_ISDIR(status.st_mode), "the directory is left as it was");
    rmdir(directory);
}

Test(mtrace, a_symlink_at_the_path_is_not_followed)
{
    char target[160];
    snprintf(target, sizeof target, "%s.target", trace_path);
    FILE *file = fopen(target, "w");
    cr_assert_not_null(file);
    fputs("precious\n", file);
    fclose(file);
    cr_assert_eq(symlink(target, trace_path), 0);
    static struct child_result result;
    run_traced(program_path(), "leaks", trace_path, NULL, &result);
    assert_exited_with(&result, 0);
    size_t length;
    const char *text = read_file(target, &length);
    cr_assert_not_null(text);
    cr_assert_str_eq(text, "precious\n", "the symlink's target is untouched");
    struct stat status;
    cr_assert_eq(lstat(trace_path, &status), 0);
    cr_assert(S_ISLNK(status.st_mode));
    unlink(target);
}

/* A set-group-ID copy of the program, its group one the test does not
 * run as, ignores MALLOC_TRACE (secure_getenv). */
Test(mtrace, a_set_group_id_program_ignores_malloc_trace)
{
    char copy[160], command[512];
    snprintf(copy, sizeof copy, "%s.setgid", trace_path);
    snprintf(command, sizeof command, "cp %s %s", program_path(), copy);
    cr_assert_eq(system(command), 0);
    struct group *group = getgrnam("nogroup");
    gid_t other = group != NULL ? group->gr_gid : 65534;
    struct statvfs filesystem;
    if (other == getgid() || chown(copy, (uid_t)-1, other) != 0 || chmod(copy, 02755) != 0 ||
        statvfs(copy, &filesystem) != 0 || (filesystem.f_flag & ST_NOSUID)) {
        unlink(copy);
        cr_skip_test("cannot make a set-group-ID program here (not allowed to chown or chmod, "
                     "or the filesystem is mounted nosuid)");
    }
    static struct child_result result;
    run_traced(copy, "leaks", trace_path, NULL, &result);
    unlink(copy);
    assert_exited_with(&result, 0);
    struct stat status;
    cr_assert_neq(stat(trace_path, &status), 0, "no trace written by a set-group-ID program");
    /* And the same program without the bit does trace: the refusal is
     * the bit's doing. */
    run_traced(program_path(), "leaks", trace_path, NULL, &result);
    cr_assert_eq(stat(trace_path, &status), 0);
}
