/* execinfo_ex_leaks, the leak report tool, run as a user runs it: on
 * traces written here (ours, glibc's shapes, broken ones), on a program
 * compiled here for the symbols and lines, and on a real glibc mtrace. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "support.h"
#include "test_asm.h"

static char work[256];

static void make_work_dir(void)
{
    snprintf(work, sizeof work, "/tmp/execinfo_ex_leaks_test_%d", (int)getpid());
    mkdir(work, 0700);
}

static void remove_work_dir(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf %s", work);
    system(command);
}

TestSuite(leaks, .init = make_work_dir, .fini = remove_work_dir, .timeout = 30);

/* NAME inside the work directory (a fresh malloc'd string). */
static char *in_work(const char *name)
{
    char *path;
    cr_assert_gt(asprintf(&path, "%s/%s", work, name), 0);
    return path;
}

static char *write_bytes(const char *name, const void *data, size_t length)
{
    char *path = in_work(name);
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file, "%s", path);
    cr_assert_eq(fwrite(data, 1, length, file), length);
    cr_assert_eq(fclose(file), 0);
    return path;
}

static char *write_text(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

static char *read_whole(const char *path)
{
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file, "%s", path);
    size_t capacity = 1 << 16, used = 0, got;
    char *text = malloc(capacity);
    while ((got = fread(text + used, 1, capacity - 1 - used, file)) > 0) {
        used += got;
        if (used + 1 == capacity)
            text = realloc(text, capacity *= 2);
    }
    text[used] = '\0';
    fclose(file);
    return text;
}

struct tool_run {
    int status;       /* the exit status */
    char *out, *err;
};

static const char *tool_path(void)
{
    static char path[512];
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "EXECINFO_EX_BUILD is set by make test");
    snprintf(path, sizeof path, "%s/bin/execinfo_ex_leaks", build);
    return path;
}

/* A run that must end by itself within this many seconds, else it is
 * killed (SIGALRM, kept across execve) and the test fails; 0: no bound but
 * the suite's. Set by the tests of inputs that could make the tool hang
 * (a device, a FIFO, a pipe), to 60 s: natively these runs take a few ms,
 * under make test-valgrind (the tool some 30 times slower) a few s. */
static unsigned tool_alarm;

/* Run the tool with ARGS (NULL-terminated), stdin from STDIN_PATH (NULL:
 * /dev/null), ENV ("NAME=value" entries, NULL-terminated, or NULL) added;
 * it must exit, never die of a signal. */
static void run_tool_with(const char *stdin_path, char *const *env, const char *const *args,
                          struct tool_run *run)
{
    const char *argv[32] = { tool_path() };
    int count = 1;
    for (; args[count - 1] != NULL; count++)
        argv[count] = args[count - 1];
    argv[count] = NULL;
    char *out_path = in_work("tool.out"), *err_path = in_work("tool.err");

    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        alarm(tool_alarm); /* before the open: a FIFO as stdin may block there */
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        for (int i = 0; env != NULL && env[i] != NULL; i++)
            putenv(env[i]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    run->out = read_whole(out_path);
    run->err = read_whole(err_path);
    cr_assert(WIFEXITED(status), "the tool died: status 0x%x (%s); stderr:\n%s", status,
              WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "hung: killed by its alarm"
                                                                 : "a signal",
              run->err);
    run->status = WEXITSTATUS(status);
    free(out_path);
    free(err_path);
}

/* A process that writes LENGTH bytes of DATA to FD, or else to PATH,
 * opened for writing (a FIFO: it waits there for the reader), and exits;
 * killed by its alarm if nobody reads. Reap it with wait_writer. */
static pid_t start_writer(const char *path, int fd, const void *data, size_t length)
{
    pid_t writer = fork();
    cr_assert_geq(writer, 0);
    if (writer == 0) {
        alarm(60);
        if (fd < 0 && (fd = open(path, O_WRONLY)) < 0)
            _exit(1);
        for (size_t done = 0; done < length;) {
            ssize_t wrote = write(fd, (const char *)data + done, length - done);
            if (wrote <= 0)
                _exit(2);
            done += (size_t)wrote;
        }
        _exit(0);
    }
    return writer;
}

static void wait_writer(pid_t writer)
{
    int status;
    kill(writer, SIGKILL); /* done already, unless the tool stopped reading */
    cr_assert_eq(waitpid(writer, &status, 0), writer);
}

static void run_tool(struct tool_run *run, const char *const *args)
{
    run_tool_with(NULL, NULL, args, run);
}

/* Run the tool with its standard input a pipe that a writer process fills
 * with LENGTH bytes of DATA; in ARGS, "/dev/fd/0"-like names reach it too. */
static void run_tool_on_pipe(const void *data, size_t length, const char *const *args,
                             struct tool_run *run)
{
    int ends[2];
    cr_assert_eq(pipe(ends), 0);
    pid_t writer = start_writer(NULL, ends[1], data, length);
    close(ends[1]); /* the tool's EOF comes when the writer is done */
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", ends[0]);
    run_tool_with(path, NULL, args, run);
    close(ends[0]);
    wait_writer(writer);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

static void assert_not_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) == NULL, "'%s' unexpectedly in:\n%s", needle, text);
}

/* NEEDLES appear in TEXT in this order (NULL-terminated). */
static void assert_in_order(const char *text, const char *const *needles)
{
    const char *at = text;
    for (int i = 0; needles[i] != NULL; i++) {
        const char *found = strstr(at, needles[i]);
        cr_assert_not_null(found, "'%s' not found (in this order) in:\n%s", needles[i], text);
        at = found + strlen(needles[i]);
    }
}

static void assert_exit(const struct tool_run *run, int status)
{
    cr_assert_eq(run->status, status, "exit %d, want %d; stdout:\n%s\nstderr:\n%s", run->status,
                 status, run->out, run->err);
}

/* The last line of TEXT, without its newline (a static copy). */
static const char *last_line(const char *text)
{
    static char line[1024];
    size_t length = strlen(text);
    if (length > 0 && text[length - 1] == '\n')
        length--;
    size_t start = length;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(line, sizeof line, "%.*s", (int)(length - start), text + start);
    return line;
}

/* Run python3 on SCRIPT with the tool's stdout as its file argument. */
static void assert_python_accepts(const char *json, const char *script)
{
    char *json_path = write_text("report.json", json);
    char *script_path = write_text("check.py", script);
    char command[2048];
    snprintf(command, sizeof command, "python3 %s %s 2>&1", script_path, json_path);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    char output[8192];
    size_t got = fread(output, 1, sizeof output - 1, pipe);
    output[got] = '\0';
    int status = pclose(pipe);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strcmp(output, "ok\n") == 0,
              "python3 said:\n%s\nabout:\n%s", output, json);
}

/* ---- replay and grouping ------------------------------------------------ */

static const char known_leaks[] =
    "= Start\n"
    "@ /nonexistent/a:[0x10] + 0x1000 0xa\n"
    "@ /nonexistent/b:[0x20] + 0x2000 0x64\n"
    "@ /nonexistent/a:[0x10] + 0x3000 0x14\n"
    "@ /nonexistent/c:[0x30] + 0x4000 0x5\n"
    "@ /nonexistent/a:[0x10] + 0x5000 0x1e\n"
    "@ /nonexistent/c:[0x30] + 0x6000 0x5\n"
    "@ /nonexistent/d:[0x40] + 0x7000 0x400\n"
    "@ /nonexistent/a:[0x11] - 0x7000\n"
    "@ /nonexistent/c:[0x30] + 0x8000 0x7\n"
    "- 0x8000\n"
    "= End\n";

Test(leaks, groups_by_caller_with_counts_and_totals_largest_first)
{
    struct tool_run run;
    char *trace = write_text("known.trace", known_leaks);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("Memory not freed: 170 bytes in 6 blocks, from 3 stacks\n",
                                  "\n100 bytes in 1 blocks allocated at:\n"
                                  "    #0 /nonexistent/b+0x20\n",
                                  "\n60 bytes in 3 blocks allocated at:\n"
                                  "    #0 /nonexistent/a+0x10\n",
                                  "\n10 bytes in 2 blocks allocated at:\n"
                                  "    #0 /nonexistent/c+0x30\n"));
    assert_not_in(run.out, "/nonexistent/d");
    cr_assert_str_eq(last_line(run.out),
                     "170 bytes in 6 blocks not freed, from 3 stacks (10 events, 0 malformed lines)");
    cr_assert_str_eq(run.err, "");
}

Test(leaks, equal_bytes_put_more_blocks_first_then_the_first_seen)
{
    struct tool_run run;
    char *trace = write_text("ties.trace",
                             "@ /nonexistent/one:[0x1] + 0x1000 0x32\n"
                             "@ /nonexistent/three:[0x3] + 0x2000 0x19\n"
                             "@ /nonexistent/two:[0x2] + 0x3000 0x32\n"
                             "@ /nonexistent/three:[0x3] + 0x4000 0x19\n");
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("50 bytes in 2 blocks allocated at:\n    #0 /nonexistent/three+0x3",
                                  "50 bytes in 1 blocks allocated at:\n    #0 /nonexistent/one+0x1",
                                  "50 bytes in 1 blocks allocated at:\n    #0 /nonexistent/two+0x2"));
}

Test(leaks, no_leak_exits_zero)
{
    struct tool_run run;
    char *trace = write_text("clean.trace", "= Start\n@ /nonexistent/a:[0x10] + 0x1000 0x10\n"
                                            "@ /nonexistent/a:[0x20] - 0x1000\n= End\n");
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 0);
    cr_assert_str_eq(run.out, "No memory leaks.\n0 bytes in 0 blocks not freed, from 0 stacks "
                              "(2 events, 0 malformed lines)\n");
}

Test(leaks, realloc_chains_and_realloc_null_and_zero)
{
    struct tool_run run;
    char *trace = write_text("realloc.trace",
                             "@ /nonexistent/r:[0x1] + 0x1000 0x10\n"
                             "@ /nonexistent/r:[0x2] < 0x1000\n"
                             "@ /nonexistent/r:[0x2] > 0x2000 0x20\n"
                             "@ /nonexistent/r:[0x3] < 0x2000\n"
                             "@ /nonexistent/r:[0x3] > 0x2000 0x40\n"
                             "@ /nonexistent/r:[0x4] < 0x2000\n"
                             "@ /nonexistent/r:[0x4] > 0x3000 0x80\n"
                             "@ /nonexistent/r:[0x5] + 0x4000 0x8\n"
                             "@ /nonexistent/r:[0x6] - 0x4000\n"
                             "@ /nonexistent/r:[0x7] ! 0x3000 0x100000\n");
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in(run.out, "\n128 bytes in 1 blocks allocated at:\n    #0 /nonexistent/r+0x4\n");
    cr_assert_str_eq(last_line(run.out),
                     "128 bytes in 1 blocks not freed, from 1 stacks (10 events, 0 malformed lines)");
    cr_assert_str_eq(run.err, "", "a realloc chain frees nothing twice");
}

Test(leaks, calloc_zero_sizes_and_failed_allocations)
{
    struct tool_run run;
    char *trace = write_text("calloc.trace",
                             "@ /nonexistent/calloc_site:[0x10] + 0x1000 0x30\n"
                             "@ /nonexistent/malloc0:[0x20] + 0x2000 0\n"
                             "@ /nonexistent/failed:[0x30] + (nil) 0x40\n"
                             "- (nil)\n");
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("48 bytes in 1 blocks allocated at:\n"
                                  "    #0 /nonexistent/calloc_site+0x10\n",
                                  "0 bytes in 1 blocks allocated at:\n"
                                  "    #0 /nonexistent/malloc0+0x20\n"));
    assert_not_in(run.out, "failed");
    cr_assert_str_eq(last_line(run.out),
                     "48 bytes in 2 blocks not freed, from 2 stacks (4 events, 0 malformed lines)");
}

Test(leaks, stack_lines_group_blocks_by_whole_stack)
{
    struct tool_run run;
    char *trace = write_text("stacks.trace",
                             "@ /x/s:[0x10] + 0x1000 0x10\n"                     /* 1 */
                             "# stack /x/s:[0x10] /x/s:[0x20] /x/s:[0x30]\n"     /* 2 */
                             "@ /x/s:[0x10] + 0x2000 0x10\n"                     /* 3 */
                             "# stack /x/s:[0x10] /x/s:[0x21] /x/s:[0x30]\n"     /* 4 */
                             "@ /x/s:[0x10] + 0x3000 0x10\n"                     /* 5 */
                             "# stack /x/s:[0x10] /x/s:[0x20] /x/s:[0x30]\n"     /* 6 */
                             "@ /x/s:[0x10] + 0x4000 0x10\n"                     /* 7 */
                             "\n"                                                /* 8 */
                             "# stack /x/s:[0x10] /x/s:[0x99]\n"                 /* 9: not after it */
                             "@ /x/s:[0x50] - 0x1000\n"                          /* 10 */
                             "# stack /x/s:[0x50] /x/s:[0x60]\n"                 /* 11: a free's */
                             "@ /x/s:[0x10] + 0x5000 0x100\n"                    /* 12 */
                             "# stack /my dir/with space:[0x70] /x/s:[0x30]\n"   /* 13 */
                             "@ /x/s:[0x10] + 0x6000 0x8\n"                      /* 14 */
                             "# stack /x/s:[0x10] /x/s:[0x21] /x/s:[0x30]\n");   /* 15 */
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("\n\n256 bytes in 1 blocks allocated at:\n"
                                  "    #0 /my dir/with space+0x70\n"
                                  "    #1 /x/s+0x30\n\n",
                                  "24 bytes in 2 blocks allocated at:\n"
                                  "    #0 /x/s+0x10\n    #1 /x/s+0x21\n    #2 /x/s+0x30\n\n",
                                  "16 bytes in 1 blocks allocated at:\n"
                                  "    #0 /x/s+0x10\n\n",
                                  "16 bytes in 1 blocks allocated at:\n"
                                  "    #0 /x/s+0x10\n    #1 /x/s+0x20\n    #2 /x/s+0x30\n\n"));
    assert_not_in(run.out, "+0x99");
    assert_not_in(run.out, "+0x60");
    cr_assert_str_eq(last_line(run.out),
                     "312 bytes in 5 blocks not freed, from 4 stacks (7 events, 0 malformed lines)");
    cr_assert_str_eq(run.err, "");
}

Test(leaks, glibc_trace_shapes)
{
    struct tool_run run;
    char *trace = write_text("glibc.trace",
                             "= Start\n"
                             "@ ./nonexistent-a.out:(main+0x1b)[0x55d0c1a2b2a0] + 0x1000 0x10\n"
                             "@ [0x7f3a12345678] + 0x2000 0x20\n"
                             "+ 0x3000 0x30\n"
                             "@ ./nonexistent-a.out:[0x1234] + 0x4000 0x40\n"
                             "@ /nonexistent/libc.so.6:(__strdup+1a)[0x9e9aa] + 0x5000 0x2\n"
                             "@ ./nonexistent-a.out:(helper-0x4)[0x11aa] + 0x6000 0x8\n"
                             "! 0x3000 0x100\n"
                             "@ ./nonexistent-a.out:[0x1234] ! 0x4000 0x100\n"
                             "- 0x1000\n"
                             "+ (nil) 0x10\n"
                             "= End\n");
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("\n64 bytes in 1 blocks allocated at:\n"
                                  "    #0 ./nonexistent-a.out+0x1234\n",
                                  "\n48 bytes in 1 blocks allocated at:\n"
                                  "    (no caller recorded)\n",
                                  "\n32 bytes in 1 blocks allocated at:\n"
                                  "    #0 [0x7f3a12345678]\n",
                                  "\n8 bytes in 1 blocks allocated at:\n"
                                  "    #0 ./nonexistent-a.out:(helper-0x4)[0x11aa]\n",
                                  "\n2 bytes in 1 blocks allocated at:\n"
                                  "    #0 /nonexistent/libc.so.6:(__strdup+0x1a)[0x9e9aa]\n"));
    cr_assert_str_eq(last_line(run.out),
                     "154 bytes in 5 blocks not freed, from 5 stacks (10 events, 0 malformed lines)");
    cr_assert_str_eq(run.err, "");
}

/* ---- malformed input ---------------------------------------------------- */

Test(leaks, malformed_lines_are_reported_with_their_numbers_and_skipped)
{
    static char data[1 << 18];
    size_t used = 0;
#define ADD(text) (memcpy(data + used, text, sizeof text - 1), used += sizeof text - 1)
    ADD("= Start\n");                                              /* 1 */
    ADD("@ /x/m:[0x10] + 0x1000 0x10\n");                          /* 2 valid */
    ADD("@ /x/m:[0x10] + 0x11112222333344445 0x10\n");             /* 3 pointer overflows */
    ADD("@ /x/m:[0x10] + 0x2000 0x100000000000000000\n");          /* 4 size overflows */
    ADD("@ /x/m:[0x10] +\n");                                      /* 5 fields missing */
    ADD("@ /x/m:[0x10] + 0x3000\n");                               /* 6 size missing */
    ADD("@ /x/m:[0x10]\n");                                        /* 7 operator missing */
    ADD("@ /x/m:[0x10] + 0x4000 0x10\r\n");                        /* 8 valid, CRLF */
    memset(data + used, 'A', 70000);                               /* 9 longer than 64 KiB */
    used += 70000;
    ADD("\n");
    ADD("@ /x/m:[0x10] + 0x5000 0x10\n");                          /* 10 valid */
    ADD("@ /x/m:[0x10] + 0x6000\0 0x10\n");                        /* 11 a NUL byte */
    ADD("@ /x/m:[0x10] + 0x7000 0x10 extra\n");                    /* 12 a field too many */
    ADD("@ /x/m:[0x1g] + 0x8000 0x10\n");                          /* 13 bad hex in WHERE */
    ADD("@ /x/m:[0x99999999999999999] + 0x8000 0x10\n");           /* 14 WHERE overflows */
    ADD("# stack\n");                                              /* 15 no frames */
    ADD("hello world\n");                                          /* 16 no such line */
    ADD("@ /x/m:[0x10] - 0x1000\n");                               /* 17 valid */
    ADD("@ /x/m:[0x10] + 0x9000 0x10\x01\x1b[31m\n");              /* 18 control bytes */
    ADD("# stack /x/m:[0x10] broken\n");                           /* 19 bad frame list */
    ADD("@ /x/m:[0x10] + 0xa000 0x10");                            /* 20 valid, no newline */
#undef ADD
    struct tool_run run;
    char *trace = write_bytes("malformed.trace", data, used);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    cr_assert_str_eq(last_line(run.out),
                     "48 bytes in 3 blocks not freed, from 1 stacks (5 events, 14 malformed lines)");

    static const int bad[] = { 3, 4, 5, 6, 7, 9, 11, 12, 13, 14, 15, 16, 18, 19 };
    char needle[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(needle, sizeof needle, "execinfo_ex_leaks: %s:%d: malformed line skipped: ", trace,
                 bad[i]);
        assert_in(run.err, needle);
    }
    static const int good[] = { 1, 2, 8, 10, 17, 20 };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        snprintf(needle, sizeof needle, "%s:%d: ", trace, good[i]);
        assert_not_in(run.err, needle);
    }
    cr_assert_eq(count_of(run.err, "malformed line skipped: "), 14);
    snprintf(needle, sizeof needle, ":9: malformed line skipped: %.80s\n",
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    assert_in(run.err, needle);
    assert_in(run.err, ":11: malformed line skipped: @ /x/m:[0x10] + 0x6000\\x00 0x10\n");
    assert_in(run.err, ":18: malformed line skipped: @ /x/m:[0x10] + 0x9000 0x10\\x01\\x1b[31m\n");
    snprintf(needle, sizeof needle, "execinfo_ex_leaks: %s: 14 malformed lines skipped\n", trace);
    assert_in(run.err, needle);
}

Test(leaks, after_twenty_malformed_lines_only_the_count)
{
    static char data[4096];
    size_t used = 0;
    for (int i = 1; i <= 30; i++)
        used += (size_t)snprintf(data + used, sizeof data - used, "junk %d\n", i);
    used += (size_t)snprintf(data + used, sizeof data - used, "@ /x/m:[0x10] + 0x1000 0x10\n");
    struct tool_run run;
    char *trace = write_bytes("junk.trace", data, used);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    cr_assert_eq(count_of(run.err, "malformed line skipped: "), 20, "%s", run.err);
    assert_in(run.err, ":20: malformed line skipped: junk 20\n");
    assert_not_in(run.err, ":21: ");
    assert_in(run.err, ": 30 malformed lines skipped (the first 20 shown)\n");
    cr_assert_str_eq(last_line(run.out),
                     "16 bytes in 1 blocks not freed, from 1 stacks (1 events, 30 malformed lines)");
}

Test(leaks, frees_never_allocated_and_duplicates_are_listed_then_counted)
{
    static char data[4096];
    size_t used = 0;
    for (int i = 0; i < 9; i++)                                           /* 1-9 */
        used += (size_t)snprintf(data + used, sizeof data - used, "- 0x%x\n", 0x1000 + 16 * i);
    used += (size_t)snprintf(data + used, sizeof data - used,
                             "@ /x/d:[0x10] + 0x5000 0x10\n"              /* 10 */
                             "@ /x/d:[0x20] + 0x5000 0x20\n"              /* 11 duplicate */
                             "@ /x/d:[0x30] < 0x6000\n"                   /* 12 never allocated */
                             "@ /x/d:[0x30] > 0x7000 0x8\n"               /* 13 */
                             "- 0x9000\n"                                 /* 14 */
                             "@ /x/d:[0x40] - 0xa000\n");                 /* 15 */
    struct tool_run run;
    char *trace = write_bytes("mismatch.trace", data, used);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    char needle[512];
    for (int i = 0; i < 9; i++) {
        snprintf(needle, sizeof needle, "execinfo_ex_leaks: %s:%d: free of 0x%x, which was never "
                 "allocated\n", trace, i + 1, 0x1000 + 16 * i);
        assert_in(run.err, needle);
    }
    snprintf(needle, sizeof needle, "%s:11: 0x5000 allocated again while live (allocated at "
             "line 10)", trace);
    assert_in(run.err, needle);
    snprintf(needle, sizeof needle, "%s:12: realloc of 0x6000, which was never allocated, at "
             "/x/d:[0x30]\n", trace);
    assert_in(run.err, needle);
    assert_not_in(run.err, ":14: ");
    assert_not_in(run.err, ":15: ");
    assert_in(run.err, ": 12 frees of pointers never allocated (the first 10 shown)\n");
    assert_in(run.err, ": 1 duplicate allocation\n");
    assert_in_order(run.out, ARGS("32 bytes in 1 blocks allocated at:\n    #0 /x/d+0x20\n",
                                  "8 bytes in 1 blocks allocated at:\n    #0 /x/d+0x30\n"));

    run_tool(&run, ARGS("--json", trace));
    assert_exit(&run, 1);
    assert_python_accepts(run.out,
                          "import json, sys\n"
                          "d = json.load(open(sys.argv[1]))\n"
                          "assert d['frees_never_allocated'] == 12, d\n"
                          "assert d['duplicate_allocations'] == 1, d\n"
                          "assert d['events'] == 15 and d['blocks'] == 2 and d['bytes'] == 40, d\n"
                          "print('ok')\n");
}

Test(leaks, standard_input_with_a_dash)
{
    struct tool_run run;
    char *trace = write_text("stdin.trace", "@ /nonexistent/a:[0x10] + 0x1000 0x10\nnot a line\n");
    run_tool_with(trace, NULL, ARGS("-"), &run);
    assert_exit(&run, 1);
    assert_in(run.out, "16 bytes in 1 blocks allocated at:\n    #0 /nonexistent/a+0x10\n");
    assert_in(run.err, "execinfo_ex_leaks: <stdin>:2: malformed line skipped: not a line\n");
}

/* Bytes of the input reach stderr escaped: a terminal shows them, never
 * acts on them (an escape sequence, a C1 CSI, a right-to-left override),
 * in a malformed line and in a pointer's caller alike. */
Test(leaks, input_bytes_reach_stderr_escaped)
{
    static const char data[] =
        "@ /x/m:[0x10] + 0x1000 0x10\n"                                  /* 1 */
        "\xe2\x80\xae" "\x9b" "31m \\ \x7f \x1b]0;title\x07 end\n"      /* 2 */
        "@ /x/\xc3\xa9\xff:[0x10] - 0x2000\n";                           /* 3 */
    struct tool_run run;
    char *trace = write_bytes("escape.trace", data, sizeof data - 1);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    assert_in(run.err, ":2: malformed line skipped: \\xe2\\x80\\xae\\x9b31m \\\\ \\x7f "
                       "\\x1b]0;title\\x07 end\n");
    assert_in(run.err, ":3: free of 0x2000, which was never allocated, at "
                       "/x/\\xc3\\xa9\\xff:[0x10]\n");
    for (const char *at = run.err; *at != '\0'; at++) {
        unsigned char byte = (unsigned char)*at;
        cr_assert(byte == '\n' || (byte >= 0x20 && byte < 0x7f), "byte 0x%02x raw in:\n%s", byte,
                  run.err);
    }
}

/* A file with no line of a trace (random bytes, text) is not a trace:
 * exit 2 with one message, not "No memory leaks" and a screen of noise.
 * An empty trace, or one of only start and end lines, still is one. */
Test(leaks, an_input_without_a_trace_line_is_not_a_trace)
{
    static char noise[3000];
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof noise; i++) {
        seed = seed * 1103515245u + 12345u;
        noise[i] = (char)(seed >> 16);
    }
    struct tool_run run;
    char needle[600];
    char *binary = write_bytes("noise.bin", noise, sizeof noise);
    run_tool(&run, ARGS(binary));
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    snprintf(needle, sizeof needle, "execinfo_ex_leaks: %s: not a malloc trace (none of its ",
             binary);
    cr_assert(strncmp(run.err, needle, strlen(needle)) == 0, "%s", run.err);
    cr_assert_eq(count_lines(run.err), 1, "one message:\n%s", run.err);

    char *text = write_text("readme.txt", "This is not a trace.\nNor is this.\n");
    run_tool(&run, ARGS("--json", text));
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    snprintf(needle, sizeof needle, "execinfo_ex_leaks: %s: not a malloc trace (none of its 2 "
             "lines is an allocation, a free or a stack) nor a saved state blob\n", text);
    cr_assert_str_eq(run.err, needle);

    static const char *const traces[] = { "", "= Start\n\n# a comment\n= End\n" };
    for (int i = 0; i < 2; i++) {
        run_tool(&run, ARGS(write_text("quiet.trace", traces[i])));
        assert_exit(&run, 0);
        assert_in(run.out, "No memory leaks.\n");
        cr_assert_str_eq(run.err, "");
    }

    /* Damage before the first event: shown, in order, once it is a trace. */
    char *damaged = write_text("damaged.trace", "junk 1\njunk 2\n@ /x/m:[0x10] + 0x1000 0x10\n"
                                                "junk 4\n");
    run_tool(&run, ARGS(damaged));
    assert_exit(&run, 1);
    assert_in_order(run.err, ARGS(":1: malformed line skipped: junk 1\n",
                                  ":2: malformed line skipped: junk 2\n",
                                  ":4: malformed line skipped: junk 4\n",
                                  ": 3 malformed lines skipped\n"));
}

/* ---- what is read, and how ----------------------------------------------- */

/* COUNT allocations of 16 bytes from one caller: 300 are about 8 KiB,
 * more than one stdio buffer (4 KiB on a pipe). */
static char *many_allocations(int count, size_t *length)
{
    static char data[1 << 16];
    size_t used = 0;
    for (int i = 0; i < count; i++)
        used += (size_t)snprintf(data + used, sizeof data - used, "@ /x/m:[0x10] + 0x%x 0x10\n",
                                 0x100000 + 16 * i);
    *length = used;
    return data;
}

static const char three_hundred_blocks[] =
    "4800 bytes in 300 blocks not freed, from 1 stacks (300 events, 0 malformed lines)\n";

/* A device may never end (/dev/zero) or act when opened: refused by its
 * kind, before it is opened, whatever its name. Bounded: the tool hung on
 * /dev/zero, a line without end. */
Test(leaks, a_device_is_refused_before_it_is_read, .timeout = 150)
{
    struct tool_run run;
    tool_alarm = 60;
    run_tool(&run, ARGS("/dev/zero"));
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    cr_assert_str_eq(run.err, "execinfo_ex_leaks: '/dev/zero' is a character device, not a "
                              "regular file or a pipe: not read (- reads standard input)\n");
    run_tool(&run, ARGS("--summary", "/dev/null"));
    assert_exit(&run, 2);
    assert_in(run.err, "'/dev/null' is a character device");
    /* /dev/stdin is what standard input is: here, /dev/zero. */
    run_tool_with("/dev/zero", NULL, ARGS("/dev/stdin"), &run);
    assert_exit(&run, 2);
    assert_in(run.err, "'/dev/stdin' is a character device");
}

/* A pipe cannot be read twice: the whole trace comes from one read of it,
 * by name (/dev/stdin; <(...) and /dev/fd/N are the same), as "-", or as
 * a FIFO (which the tool lost the first 4 KiB of, or waited on forever for
 * a second writer). */
Test(leaks, a_pipe_or_a_fifo_is_read_once_from_its_start, .timeout = 150)
{
    struct tool_run run;
    size_t length;
    const char *trace = many_allocations(300, &length);
    cr_assert_gt(length, 4096u);
    tool_alarm = 60;
    static const char *const names[] = { "/dev/stdin", "-" };
    for (int i = 0; i < 2; i++) {
        run_tool_on_pipe(trace, length, ARGS("--summary", names[i]), &run);
        assert_exit(&run, 1);
        cr_assert_str_eq(run.out, three_hundred_blocks, "%s", names[i]);
        cr_assert_str_eq(run.err, "");
    }

    char *fifo = in_work("trace.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    pid_t writer = start_writer(fifo, -1, trace, length);
    run_tool(&run, ARGS("--summary", fifo));
    wait_writer(writer);
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, three_hundred_blocks);
    /* Shorter than one read. */
    static const char one[] = "@ /x/m:[0x10] + 0x1000 0x10\n";
    writer = start_writer(fifo, -1, one, sizeof one - 1);
    run_tool(&run, ARGS("--summary", fifo));
    wait_writer(writer);
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, "16 bytes in 1 blocks not freed, from 1 stacks (1 events, 0 "
                              "malformed lines)\n");
}

static void shell(const char *format, ...);

/* Read once, a state blob is known by its first bytes on a pipe too. */
Test(leaks, a_state_blob_on_a_pipe_is_read_as_a_blob, .timeout = 150)
{
    char *path = in_work("saved.blob");
    shell("EXECINFO_EX_OPTIONS= %s/state_program save %s", getenv("EXECINFO_EX_TESTS"), path);
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file);
    static char blob[1 << 20];
    size_t length = fread(blob, 1, sizeof blob, file);
    fclose(file);
    cr_assert_gt(length, 8u);

    struct tool_run run;
    run_tool(&run, ARGS(path));
    assert_exit(&run, 1);
    cr_assert_eq(count_of(run.out, "#0 allocate_known at "), 3, "%s", run.out);
    char *from_file = run.out;
    tool_alarm = 60;
    static const char *const names[] = { "-", "/dev/stdin" };
    for (int i = 0; i < 2; i++) {
        run_tool_on_pipe(blob, length, ARGS(names[i]), &run);
        assert_exit(&run, 1);
        cr_assert_str_eq(run.out, from_file, "%s", names[i]);
        cr_assert_str_eq(run.err, "");
    }
}

/* ---- output forms and options ------------------------------------------- */

Test(leaks, json_report_parses_and_holds_the_groups)
{
    struct tool_run run;
    char *text = NULL;
    cr_assert_gt(asprintf(&text, "%s@ /nonexistent/we\"ird\\path\xff:[0x10] + 0x9000 0x1\n"
                                 "@ [0x7f3a12345678] + 0xa000 0x2\n", known_leaks), 0);
    char *trace = write_text("json.trace", text);
    run_tool(&run, ARGS("--json", trace));
    assert_exit(&run, 1);
    cr_assert_eq(count_lines(run.out), 1, "one object, one line:\n%s", run.out);
    assert_python_accepts(
        run.out,
        "import json, sys\n"
        "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
        "assert d['format'] == 'execinfo_ex leaks 1', d\n"
        "assert (d['bytes'], d['blocks'], d['stack_count']) == (173, 8, 5), d\n"
        "assert (d['events'], d['malformed']) == (12, 0), d\n"
        "s = d['stacks']\n"
        "assert [(x['bytes'], x['blocks']) for x in s] == [(100, 1), (60, 3), (10, 2), (2, 1), (1, 1)], s\n"
        "f = s[0]['frames'][0]\n"
        "assert f == {'module': '/nonexistent/b', 'offset': '0x20', 'function': None,\n"
        "             'mangled': None, 'file': None, 'line': None}, f\n"
        "assert s[0]['depth'] == 1 and len(s[0]['frames']) == 1, s[0]\n"
        "assert s[3]['frames'][0]['module'] is None, s[3]\n"
        "assert s[3]['frames'][0]['offset'] == '0x7f3a12345678', s[3]\n"
        "assert s[4]['frames'][0]['module'] == '/nonexistent/we\"ird\\\\path\\ufffd', s[4]\n"
        "print('ok')\n");
}

Test(leaks, summary_is_one_line)
{
    struct tool_run run;
    char *trace = write_text("summary.trace", known_leaks);
    run_tool(&run, ARGS("--summary", trace));
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, "170 bytes in 6 blocks not freed, from 3 stacks "
                              "(10 events, 0 malformed lines)\n");
}

/* --format=summary is --summary; -o writes the output to a file; a
 * second form, an unknown form or sample type is a usage error. */
Test(leaks, format_and_output_options)
{
    struct tool_run run;
    char *trace = write_text("format.trace", known_leaks);
    char *out = in_work("format.out");
    run_tool(&run, ARGS("--format=summary", "-o", out, trace));
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, "");
    char *written = read_whole(out);
    cr_assert_str_eq(written, "170 bytes in 6 blocks not freed, from 3 stacks "
                              "(10 events, 0 malformed lines)\n");
    free(written);
    run_tool(&run, ARGS("--summary", "--format=json", trace));
    assert_exit(&run, 2);
    assert_in(run.err, "exclude each other");
    run_tool(&run, ARGS("--format=svg", trace));
    assert_exit(&run, 2);
    assert_in(run.err, "bad value 'svg' for --format");
    run_tool(&run, ARGS("--format=folded", "--sample=peak_space", trace));
    assert_exit(&run, 2);
    assert_in(run.err, "bad value 'peak_space' for --sample");
}

/* Folded stacks of a trace: one line per stack, outermost first, the
 * value --sample names (alloc_*: freed blocks too). */
Test(leaks, folded_profile_of_a_trace)
{
    struct tool_run run;
    char *trace = write_text("folded.trace",
                             "@ /x/s:[0x10] + 0x1000 0x10\n"
                             "# stack /x/s:[0x10] /x/s:[0x20] /x/s:[0x30]\n"
                             "@ /x/s:[0x10] + 0x2000 0x20\n"
                             "# stack /x/s:[0x10] /x/s:[0x21] /x/s:[0x30]\n"
                             "@ /x/s:[0x10] - 0x2000\n"
                             "@ /x/s:[0x10] + 0x3000 0x30\n"
                             "# stack /x/s:[0x10] /x/s:[0x21] /x/s:[0x30]\n"
                             "@ /x/s:[0x10] + 0x4000 0x8\n"
                             "# stack /x/s:[0x10] /x/s:[0x20] /x/s:[0x30]\n");
    run_tool(&run, ARGS("--format=folded", trace));
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, "s+0x30;s+0x20;s+0x10 24\ns+0x30;s+0x21;s+0x10 48\n");
    run_tool(&run, ARGS("--format=folded", "--profile-sample=alloc_space", trace));
    cr_assert_str_eq(run.out, "s+0x30;s+0x20;s+0x10 24\ns+0x30;s+0x21;s+0x10 80\n");
    run_tool(&run, ARGS("--format=folded", "--sample=alloc_objects", trace));
    cr_assert_str_eq(run.out, "s+0x30;s+0x20;s+0x10 2\ns+0x30;s+0x21;s+0x10 2\n");
}

/* Five stacks of five frames, of 500, 400, ... 100 bytes. */
static char *write_five_stacks(void)
{
    static char data[4096];
    size_t used = 0;
    for (int i = 0; i < 5; i++)
        used += (size_t)snprintf(data + used, sizeof data - used,
                                 "@ /x/l:[0x%d0] + 0x%d000 0x%x\n"
                                 "# stack /x/l:[0x%d0] /x/f:[0x1] /x/f:[0x2] /x/f:[0x3] /x/f:[0x4]\n",
                                 i + 1, i + 1, (5 - i) * 100, i + 1);
    return write_bytes("five.trace", data, used);
}

Test(leaks, stacks_and_frames_limits)
{
    struct tool_run run;
    char *trace = write_five_stacks();

    run_tool(&run, ARGS("--stacks", "2", "--frames=2", trace));
    assert_exit(&run, 1);
    assert_in_order(run.out, ARGS("500 bytes in 1 blocks allocated at:\n"
                                  "    #0 /x/l+0x10\n    #1 /x/f+0x1\n    (3 more frames)\n",
                                  "400 bytes in 1 blocks allocated at:\n"
                                  "    #0 /x/l+0x20\n    #1 /x/f+0x1\n    (3 more frames)\n",
                                  "(3 more stacks: 600 bytes in 3 blocks; --stacks 0 shows all)\n"));
    assert_not_in(run.out, "#2");
    assert_not_in(run.out, "300 bytes in 1 blocks allocated");
    cr_assert_str_eq(last_line(run.out),
                     "1500 bytes in 5 blocks not freed, from 5 stacks (5 events, 0 malformed lines)");

    run_tool(&run, ARGS("--stacks=0", "--frames", "0", trace));
    assert_exit(&run, 1);
    cr_assert_eq(count_of(run.out, "allocated at:"), 5);
    cr_assert_eq(count_of(run.out, "    #4 /x/f+0x4\n"), 5);
    assert_not_in(run.out, "more");

    run_tool(&run, ARGS("--stacks=1", "--frames=3", "--json", trace));
    assert_exit(&run, 1);
    assert_python_accepts(run.out,
                          "import json, sys\n"
                          "d = json.load(open(sys.argv[1]))\n"
                          "assert d['stack_count'] == 5 and len(d['stacks']) == 1, d\n"
                          "s = d['stacks'][0]\n"
                          "assert s['bytes'] == 500 and s['depth'] == 5, s\n"
                          "assert [f['offset'] for f in s['frames']] == ['0x10', '0x1', '0x2'], s\n"
                          "print('ok')\n");
}

Test(leaks, default_limits_are_twenty_stacks_of_sixteen_frames)
{
    static char data[1 << 16];
    size_t used = 0;
    for (int i = 0; i < 25; i++) {
        used += (size_t)snprintf(data + used, sizeof data - used,
                                 "@ /x/d:[0x%x] + 0x%x 0x%x\n# stack", i + 1, 0x1000 * (i + 1),
                                 100 - i);
        for (int frame = 0; frame < 18; frame++)
            used += (size_t)snprintf(data + used, sizeof data - used, " /x/d:[0x%x]",
                                     frame ? 0x100 + frame : i + 1);
        data[used++] = '\n';
    }
    struct tool_run run;
    run_tool(&run, ARGS(write_bytes("many.trace", data, used)));
    assert_exit(&run, 1);
    cr_assert_eq(count_of(run.out, "allocated at:"), 20);
    cr_assert_eq(count_of(run.out, "    #15 "), 20);
    cr_assert_eq(count_of(run.out, "    #16 "), 0);
    cr_assert_eq(count_of(run.out, "    (2 more frames)\n"), 20);
    assert_in(run.out, "(5 more stacks: ");
}

static void assert_usage_error(const char *const *args)
{
    struct tool_run run;
    run_tool(&run, args);
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    assert_in(run.err, "execinfo_ex_leaks: ");
}

Test(leaks, bad_options_exit_two)
{
    char *trace = write_text("options.trace", known_leaks);
    assert_usage_error(ARGS("--stacks", "x", trace));
    assert_usage_error(ARGS("--stacks=-1", trace));
    assert_usage_error(ARGS("--stacks=2x", trace));
    assert_usage_error(ARGS("--frames", "12345678901", trace));
    assert_usage_error(ARGS("--frames=", trace));
    assert_usage_error(ARGS("--bogus", trace));
    assert_usage_error(ARGS("-q", trace));
    assert_usage_error(ARGS("--summary", "--json", trace));
    assert_usage_error(ARGS(trace, trace));
    assert_usage_error(ARGS("--stacks"));
    assert_usage_error((const char *const[]){ NULL });

    struct tool_run run;
    run_tool(&run, ARGS("--stacks", "x", trace));
    assert_in(run.err, "bad value 'x' for --stacks");
}

Test(leaks, help_and_version)
{
    struct tool_run run;
    run_tool(&run, ARGS("--help"));
    assert_exit(&run, 0);
    static const char *const options[] = { "--stacks=N", "--frames=N", "--summary", "--json",
                                           "--no-progress", "Exit status" };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        assert_in(run.out, options[i]);
    run_tool(&run, ARGS("--version"));
    assert_exit(&run, 0);
    assert_in(run.out, "execinfo_ex_leaks (execinfo_ex) ");
}

Test(leaks, unreadable_input_exits_two)
{
    struct tool_run run;
    char *missing = in_work("no-such.trace");
    run_tool(&run, ARGS(missing));
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    char needle[512];
    snprintf(needle, sizeof needle, "execinfo_ex_leaks: cannot open '%s': No such file or "
             "directory\n", missing);
    cr_assert_str_eq(run.err, needle);

    run_tool(&run, ARGS(work));
    assert_exit(&run, 2);
    cr_assert_str_eq(run.out, "");
    assert_in(run.err, "cannot read '");
}

/* ---- symbolization ------------------------------------------------------ */

/* A trace may name any file as a module: a FIFO nobody writes to, or a
 * device, is not read (it would block or never end), the frame keeps its
 * module+offset form. The suite's timeout catches a hang. */
Test(leaks, modules_that_are_fifos_or_devices_are_not_read)
{
    struct tool_run run;
    char *fifo = in_work("module.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    char text[1024];
    snprintf(text, sizeof text, "@ %s:[0x10] + 0x1000 0x10\n@ /dev/zero:[0x20] + 0x2000 0x20\n", fifo);
    char *trace = write_text("fifo.trace", text);
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    char needle[600];
    snprintf(needle, sizeof needle, "#0 %s+0x10\n", fifo);
    assert_in(run.out, needle);
    assert_in(run.out, "#0 /dev/zero+0x20\n");
}

static const char program_source[] =
    "#include <mcheck.h>\n"                                              /* 1 */
    "#include <stdlib.h>\n"                                              /* 2 */
    "__attribute__((noinline)) void *leak_target(unsigned n)\n"          /* 3 */
    "{\n"                                                                /* 4 */
    "    return malloc(n * 2);\n"                                        /* 5 */
    "}\n"                                                                /* 6 */
    "int main(void)\n"                                                   /* 7 */
    "{\n"                                                                /* 8 */
    "    mtrace();\n"                                                    /* 9 */
    "    void *kept = leak_target(3);\n"                                 /* 10 */
    "    free(malloc(5));\n"                                             /* 11 */
    "    muntrace();\n"                                                  /* 12 */
    "    return kept == 0;\n"                                            /* 13 */
    "}\n";

static void shell(const char *format, ...)
{
    char command[4096];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command, sizeof command, format, arguments);
    va_end(arguments);
    int status = system(command);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "failed: %s", command);
}

static void shell_output(char *output, size_t capacity, const char *format, ...)
{
    char command[4096];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command, sizeof command, format, arguments);
    va_end(arguments);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    cr_assert_not_null(fgets(output, (int)capacity, pipe), "no output: %s", command);
    pclose(pipe);
    output[strcspn(output, "\n")] = '\0';
}

/* Compile the test program as a PIE with -g -O0; return its path and the
 * module-relative address of leak_target in *TARGET. */
static char *build_program(uint64_t *target)
{
    char *source = write_text("leaks_prog.c", program_source);
    char *program = in_work("leaks_prog");
    char value[64];
    shell("cc -g -O0 -fPIE -pie -o %s %s", program, source);
    shell_output(value, sizeof value, "nm %s | awk '$3 == \"leak_target\" { print $1 }'", program);
    *target = strtoull(value, NULL, 16);
    cr_assert_gt(*target, 0, "nm found leak_target");
    return program;
}

/* What addr2line says of ADDRESS in PROGRAM: "file:line". */
static void addr2line_of(const char *program, uint64_t address, char *out, size_t capacity)
{
    shell_output(out, capacity, "addr2line -e %s 0x%" PRIx64, program, address);
    cr_assert(strstr(out, "leaks_prog.c:") != NULL, "addr2line: %s", out);
}

/* The tool on a one-frame trace PROGRAM:[0xADDRESS] gives the frame line
 * "leak_target at FILE:LINE (PROGRAM+0xADDRESS)", FILE:LINE addr2line's. */
static void assert_names_target(const char *program, uint64_t address, char *const *env)
{
    char where[600], expected[2048], location[1024];
    snprintf(where, sizeof where, "@ %s:[0x%" PRIx64 "] + 0x1000 0x6\n", program, address);
    char *trace = write_text("symbols.trace", where);
    struct tool_run run;
    run_tool_with(NULL, env, ARGS(trace), &run);
    assert_exit(&run, 1);
    addr2line_of(program, address, location, sizeof location);
    snprintf(expected, sizeof expected, "6 bytes in 1 blocks allocated at:\n"
             "    #0 leak_target at %s (%s+0x%" PRIx64 ")\n", location, program, address);
    assert_in(run.out, expected);
    const char *line = strrchr(location, ':') + 1;
    cr_assert(atoi(line) >= 3 && atoi(line) <= 6, "line %s is leak_target's", line);
}

Test(leaks, symbolizes_a_pie_with_function_and_line, .timeout = 60)
{
    uint64_t target;
    char *program = build_program(&target);
    assert_names_target(program, target + 4, NULL);

    /* glibc's shape: found through the symbol, its call one byte before. */
    char text[1024];
    snprintf(text, sizeof text, "@ %s:(leak_target+0x4)[0x55d0c1a2b2a0] + 0x2000 0x7\n"
             "@ %s.gone:[0x%" PRIx64 "] + 0x3000 0x1\n", program, program, target);
    char *trace = write_text("glibc_symbols.trace", text);
    struct tool_run run;
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    char expected[2048];
    snprintf(expected, sizeof expected, "7 bytes in 1 blocks allocated at:\n"
             "    #0 leak_target at %s/leaks_prog.c:", work);
    assert_in(run.out, expected);
    snprintf(expected, sizeof expected, " (%s+0x%" PRIx64 ")\n", program, target + 3);
    assert_in(run.out, expected);
    snprintf(expected, sizeof expected, "    #0 %s.gone+0x%" PRIx64 "\n", program, target);
    assert_in(run.out, expected);
}

Test(leaks, symbolizes_a_stripped_pie_from_its_build_id_debug_file, .timeout = 60)
{
    uint64_t target;
    char *program = build_program(&target);
    char build_id[128];
    shell_output(build_id, sizeof build_id, "readelf -n %s | awk '/Build ID/ { print $3 }'",
                 program);
    cr_assert_gt(strlen(build_id), 2, "the program has a build-id");
    char *root = in_work("debug");
    char *stripped = in_work("leaks_prog.stripped");
    shell("mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug",
          root, build_id, program, root, build_id, build_id + 2);
    /* addr2line reads the unstripped copy; the tool gets the stripped one. */
    shell("strip --strip-all -o %s %s", stripped, program);

    char root_setting[600];
    snprintf(root_setting, sizeof root_setting, "EXECINFO_EX_DEBUG_ROOT=%s/empty", work);
    char where[600];
    snprintf(where, sizeof where, "@ %s:[0x%" PRIx64 "] + 0x1000 0x6\n", stripped, target + 4);
    struct tool_run run;
    run_tool_with(NULL, (char *[]){ root_setting, NULL }, ARGS(write_text("s.trace", where)), &run);
    snprintf(where, sizeof where, "    #0 %s+0x%" PRIx64 "\n", stripped, target + 4);
    assert_in(run.out, where); /* stripped, no debug file: no name */

    snprintf(root_setting, sizeof root_setting, "EXECINFO_EX_DEBUG_ROOT=%s", root);
    char location[1024], expected[2048];
    addr2line_of(program, target + 4, location, sizeof location);
    run_tool_with(NULL, (char *[]){ root_setting, NULL }, ARGS(in_work("s.trace")), &run);
    assert_exit(&run, 1);
    snprintf(expected, sizeof expected, "    #0 leak_target at %s (%s+0x%" PRIx64 ")\n", location,
             stripped, target + 4);
    assert_in(run.out, expected);
}

Test(leaks, symbolizes_a_stripped_pie_from_its_debuglink, .timeout = 60)
{
    uint64_t target;
    char *program = build_program(&target);
    char location[1024];
    addr2line_of(program, target + 4, location, sizeof location);
    shell("cd %s && objcopy --only-keep-debug leaks_prog leaks_prog.debug && "
          "strip --strip-all leaks_prog && objcopy --add-gnu-debuglink=leaks_prog.debug leaks_prog",
          work);
    char root_setting[600];
    snprintf(root_setting, sizeof root_setting, "EXECINFO_EX_DEBUG_ROOT=%s/empty", work);
    char where[600], expected[2048];
    snprintf(where, sizeof where, "@ %s:[0x%" PRIx64 "] + 0x1000 0x6\n", program, target + 4);
    struct tool_run run;
    run_tool_with(NULL, (char *[]){ root_setting, NULL }, ARGS(write_text("l.trace", where)), &run);
    assert_exit(&run, 1);
    snprintf(expected, sizeof expected, "    #0 leak_target at %s (%s+0x%" PRIx64 ")\n", location,
             program, target + 4);
    assert_in(run.out, expected);
}

Test(leaks, reads_a_real_glibc_mtrace, .timeout = 60)
{
    static const char *const debug_libraries[] = { "/lib/" TEST_MULTIARCH "/libc_malloc_debug.so.0",
                                                   "/usr/lib/" TEST_MULTIARCH "/libc_malloc_debug.so.0",
                                                   NULL };
    const char *library = NULL;
    for (int i = 0; debug_libraries[i] != NULL && library == NULL; i++)
        if (access(debug_libraries[i], R_OK) == 0)
            library = debug_libraries[i];
    if (library == NULL)
        cr_skip_test("glibc's libc_malloc_debug.so.0 (mtrace) is not installed");
    uint64_t target;
    char *program = build_program(&target);
    char *trace = in_work("real.trace");
    shell("MALLOC_TRACE=%s LD_PRELOAD=%s %s", trace, library, program);

    struct tool_run run;
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    char expected[1024];
    snprintf(expected, sizeof expected, "6 bytes in 1 blocks allocated at:\n"
             "    #0 leak_target at %s/leaks_prog.c:", work);
    assert_in(run.out, expected);
    assert_in(run.out, "6 bytes in 1 blocks not freed, from 1 stacks (");
    assert_in(run.out, " 0 malformed lines)");
    cr_assert_str_eq(run.err, "");
}

Test(leaks, reads_the_hooks_library_trace_with_stacks, .timeout = 60)
{
    uint64_t target;
    char *program = build_program(&target);
    char *trace = in_work("hooks.trace");
    shell("MALLOC_TRACE=%s EXECINFO_EX_OPTIONS=mtrace_frames=8 LD_PRELOAD=%s/libexecinfo_ex_hooks.so %s",
          trace, getenv("EXECINFO_EX_BUILD"), program);

    struct tool_run run;
    run_tool(&run, ARGS(trace));
    assert_exit(&run, 1);
    char expected[2048];
    /* Our trace gives the call itself: the lines are exact. */
    snprintf(expected, sizeof expected, "6 bytes in 1 blocks allocated at:\n"
             "    #0 leak_target at %s/leaks_prog.c:5 (%s+0x", work, program);
    assert_in(run.out, expected);
    snprintf(expected, sizeof expected, ")\n    #1 main at %s/leaks_prog.c:10 (%s+0x", work, program);
    assert_in(run.out, expected);
    assert_in(run.out, "6 bytes in 1 blocks not freed, from 1 stacks (");
    cr_assert_str_eq(run.err, "");
}

/* ---- size and progress -------------------------------------------------- */

/* 500,000 allocations from 500 callers, 490,000 frees, 5,000 realloc pairs
 * of leaked blocks: 1,000,000 events (timings: tools/leaks/bench_leaks.sh). */
Test(leaks, a_million_events, .timeout = 120)
{
    char *path = in_work("million.trace");
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    const uint64_t base = 0x55d0c1a2b000;
    fputs("= Start\n", file);
    for (int i = 0; i < 500000; i++)
        fprintf(file, "@ /x/big:[0x%x] + 0x%" PRIx64 " 0x%x\n", 0x1000 + (i % 500) * 16,
                base + (uint64_t)i * 0x40, i % 100 + 1);
    for (int i = 0; i < 500000; i++)
        if (i % 50 != 0)
            fprintf(file, "@ /x/big:[0x2000] - 0x%" PRIx64 "\n", base + (uint64_t)i * 0x40);
    for (int i = 0; i < 500000; i += 100)
        fprintf(file, "@ /x/big:[0x3000] < 0x%" PRIx64 "\n@ /x/big:[0x3000] > 0x%" PRIx64
                " 0x10\n", base + (uint64_t)i * 0x40, base + (uint64_t)i * 0x40 + 0x8);
    cr_assert_eq(fclose(file), 0);

    struct tool_run run;
    run_tool(&run, ARGS("--summary", path));
    assert_exit(&run, 1);
    cr_assert_str_eq(run.out, "335000 bytes in 10000 blocks not freed, from 6 stacks "
                              "(1000000 events, 0 malformed lines)\n");
    cr_assert_str_eq(run.err, "", "no progress line when stderr is not a terminal");
}

/* Feed the tool's stdin in two parts 0.8 s apart, its stderr a terminal:
 * return what the terminal got. */
static char *progress_on_terminal(int no_progress)
{
    int master, slave, input[2];
    cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
    cr_assert_eq(pipe(input), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        dup2(input[0], 0);
        dup2(slave, 2);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        close(input[1]);
        close(master);
        if (no_progress)
            execl(tool_path(), tool_path(), "--no-progress", "-", (char *)NULL);
        else
            execl(tool_path(), tool_path(), "-", (char *)NULL);
        _exit(127);
    }
    close(slave);
    close(input[0]);
    /* More than the tool's 1 MiB read block each time, so that it reads the
     * first part, then waits for the second. */
    FILE *writer = fdopen(input[1], "w");
    for (int part = 0; part < 2; part++) {
        for (int i = 0; i < 40000; i++)
            fprintf(writer, "@ /x/p:[0x10] + 0x%x 0x10\n", 0x1000 + 16 * (part * 40000 + i));
        fflush(writer);
        if (part == 0)
            nanosleep(&(struct timespec){ 0, 800000000 }, NULL);
    }
    fclose(writer);

    static char output[1 << 16];
    size_t used = 0;
    struct pollfd ready = { master, POLLIN, 0 };
    while (used + 1 < sizeof output && poll(&ready, 1, 10000) > 0) {
        ssize_t got = read(master, output + used, sizeof output - 1 - used);
        if (got <= 0)
            break; /* EIO once the tool has exited */
        used += (size_t)got;
    }
    output[used] = '\0';
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x: %s", status, output);
    close(master);
    return output;
}

Test(leaks, progress_line_on_a_terminal_only_and_erased, .timeout = 60)
{
    const char *shown = progress_on_terminal(0);
    assert_in(shown, "\rexecinfo_ex_leaks: ");
    assert_in(shown, " lines read");
    /* Erased at the end: blanks over it, the cursor back at the start. */
    const char *last = strrchr(shown, '\r');
    cr_assert_not_null(last);
    const char *before = last - 1;
    while (before > shown && *before == ' ')
        before--;
    cr_assert_eq(*before, '\r', "erased with blanks: '%s'", shown);
    cr_assert_gt(last - before, 20);

    const char *quiet = progress_on_terminal(1);
    cr_assert_str_eq(quiet, "", "--no-progress: '%s'", quiet);
}
