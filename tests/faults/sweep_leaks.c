/* sweep_leaks.c: the allocation-failure sweep of the leak tool,
 * execinfo_ex_leaks, run whole under the LD_PRELOAD shim fail_alloc.so
 * (every allocation from its first constructor on: the library's index
 * built at load, reading the input, symbolizing with libelf and libdw,
 * the report).
 *
 * For each input, a reference run counts the allocations and keeps the
 * exit status and the output; then run N fails the Nth allocation, and
 * must either end with status 2 and "out of memory" on stderr (what the
 * tool does when memory runs out; nothing is checked for blocks then, as
 * the tool exits at once), or give the reference's status and output
 * exactly (the failure was absorbed) with no more blocks live at exit than
 * the reference; never a crash, a hang, another status or another output.
 *
 *   sweep_leaks TOOL SHIM INPUTS_DIR WORK_DIR
 * INPUTS_DIR holds what "sweep_mtrace --produce" writes. */
#define _GNU_SOURCE
#include "sweep.h"

#include <fcntl.h>

static const char *tool, *shim, *inputs, *work;
static char *const *tool_arguments;

static char *read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *text;
    if (fd < 0)
        return strdup("");
    sweep_read_all(fd, &text);
    close(fd);
    return text;
}

static int trial_tool(long fail_at)
{
    char out[4096], err[4096], report[4096], number[32];
    snprintf(out, sizeof out, "%s/out.%ld", work, fail_at);
    snprintf(err, sizeof err, "%s/err.%ld", work, fail_at);
    snprintf(report, sizeof report, "%s/report.%ld", work, fail_at);
    snprintf(number, sizeof number, "%ld", fail_at);
    unlink(report);
    pid_t child = fork();
    if (child == 0) {
        int out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int err_fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out_fd < 0 || err_fd < 0)
            _exit(126);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        setenv("LD_PRELOAD", shim, 1);
        setenv("FAULT_FAIL_AT", number, 1);
        setenv("FAULT_REPORT", report, 1);
        alarm(20); /* kept across exec: a hung tool dies by SIGALRM */
        execv(tool, tool_arguments);
        _exit(127);
    }
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    char *output = read_file(out), *messages = read_file(err), *counts = read_file(report);
    long made = -1, live = 0;
    int fired = 0;
    sscanf(counts, "%ld %d %ld", &made, &fired, &live);
    /* The tool's stderr is the trial's: the parent classifies with it. */
    sweep_note("%s", messages);
    unlink(out);
    unlink(err);
    unlink(report);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status)); /* the tool's crash or hang is the trial's */
        _exit(OUTCOME_SETUP);
    }
    int code = WEXITSTATUS(status);
    if (code == 1 && strstr(messages, "libdw: Cannot allocate memory") != NULL)
        _exit(1); /* libdw's out-of-memory exit: the parent knows it */
    size_t text_size = strlen(output) + 32;
    char *text = malloc(text_size);
    snprintf(text, text_size, "status %d\n%s", code, output);
    if (fail_at == 0) {
        if (made < 0 || code == 2 || code >= 126) {
            sweep_note("    the reference run: status %d, report '%s'\n", code, counts);
            return OUTCOME_SETUP;
        }
        sweep_reference_report(made, live, 0, text);
        return OUTCOME_REFERENCE;
    }
    if (!fired)
        return OUTCOME_NOT_FIRED;
    if (code == 2 && (strstr(messages, "out of memory") != NULL ||
                      strstr(messages, "Cannot allocate memory") != NULL))
        return OUTCOME_FAILED_CLEANLY;
    if (strcmp(text, sweep_expected.text) != 0) {
        sweep_note("    status %d and output:\n%s    the reference's:\n%s", code, output,
                   sweep_expected.text);
        return code == 2 ? OUTCOME_WRONG_ERROR : OUTCOME_WRONG_RESULT;
    }
    if (live > sweep_expected.delta) {
        sweep_note("    %ld blocks live at exit, the reference's %ld\n", live,
                   sweep_expected.delta);
        return OUTCOME_LEAK;
    }
    return OUTCOME_SAME;
}

int main(int argc, char **argv)
{
    int failed = 0;
    double budget = getenv("FAULT_BUDGET") ? atof(getenv("FAULT_BUDGET")) : 20;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 5) {
        fprintf(stderr, "usage: sweep_leaks TOOL SHIM INPUTS_DIR WORK_DIR\n");
        return 2;
    }
    tool = argv[1];
    shim = argv[2];
    inputs = argv[3];
    work = argv[4];
    char trace[4096], before[4096], after[4096];
    snprintf(trace, sizeof trace, "%s/trace", inputs);
    snprintf(before, sizeof before, "%s/before.state", inputs);
    snprintf(after, sizeof after, "%s/after.state", inputs);
    char *trace_run[] = { (char *)tool, "--no-progress", trace, NULL };
    char *blob_run[] = { (char *)tool, "--no-progress", "--json", after, NULL };
    char *pair_run[] = { (char *)tool, "--no-progress", before, after, NULL };
    struct {
        const char *name;
        char *const *arguments;
    } runs[] = {
        { "execinfo_ex_leaks TRACE", trace_run },
        { "execinfo_ex_leaks --json STATE", blob_run },
        { "execinfo_ex_leaks STATE LATER_STATE", pair_run },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        tool_arguments = runs[i].arguments;
        sweep_operation(runs[i].name, trial_tool, budget, 0, &failed);
    }
    printf("sweep_leaks: %s\n", failed ? "FAILED" : "all trials passed");
    return failed;
}
