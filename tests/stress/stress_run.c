/* stress_run.c: the driver of `make stress` (tests/stress/stress.mk).
 *
 *   stress_run SECONDS RUNS TARGET...
 *
 * TARGET: signals, fork (each a program that runs SECONDS and checks
 * itself), crashes, exit, scribble (RUNS runs of a program, each checked
 * here). Every run has a deadline: past it the run's process group is
 * killed and it counts as a hang. Each target prints one figure line;
 * the exit status is 0 when every target held, 1 otherwise. Programs come
 * from STRESS_BIN, the hook layer from EXECINFO_EX_BUILD. */
#include "stress_common.h"

#include <stdbool.h>

static const char *bin_dir, *build_dir;
static char hooks_preload[4096];

static void program_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", bin_dir, name);
}

/* The first lines of a failed run's output. */
static void show_output(const char *output)
{
    int lines = 0;
    const char *at = output;
    while (*at && lines < 40) {
        const char *end = strchr(at, '\n');
        size_t length = end != NULL ? (size_t)(end - at) : strlen(at);
        fprintf(stderr, "    | %.*s%s\n", length > 300 ? 300 : (int)length, at,
                length > 300 ? "..." : "");
        lines++;
        at += length + (end != NULL);
    }
    if (*at)
        fprintf(stderr, "    | ... (%zu more bytes)\n", strlen(at));
}

/* ---- the self-checking programs ------------------------------------------- */

static int run_self_checking(const char *name, const char *title, int seconds, bool preload_hooks)
{
    char path[4096], argument[32];
    program_path(path, sizeof path, name);
    snprintf(argument, sizeof argument, "%d", seconds);
    char *argv[] = { path, argument, NULL };
    char *environment[] = { preload_hooks ? hooks_preload : NULL, NULL };
    struct run_result result;
    run_bounded(argv, environment, seconds + 90.0, &result);
    char status[96];
    bool held = !result.hung && WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0;
    /* The program's own figure is its last line, and all it writes. */
    char *figure = result.output + result.length;
    while (figure > result.output && figure[-1] == '\n')
        figure--;
    while (figure > result.output && figure[-1] != '\n')
        figure--;
    if (held && (figure != result.output || !starts_with(figure, title))) {
        held = false;
        fprintf(stderr, "%s: the program wrote more than its figure\n", title);
    }
    if (held)
        figure[strcspn(figure, "\n")] = '\0';
    if (held) {
        printf("%s\n", figure);
    } else {
        printf("%s: FAILED: %s after %.1f s\n", title, describe_status(&result, status, sizeof status),
               result.seconds);
        show_output(result.output);
    }
    fflush(stdout);
    free(result.output);
    return held ? 0 : 1;
}

/* ---- crash reports ---------------------------------------------------------- */

#define MAX_LINES (1 << 16)

struct expected_report {
    pid_t pid;
    bool hooks;
    bool json;
    bool registers;
    const char *crash_function;    /* frame 0 */
    bool crasher_thread;           /* "crasher-K" at fault address 0x100 + 16 K */
    unsigned long fault_address;   /* else: this one, if not 0 */
    int damaged;                   /* -1: any; else the count of damaged blocks */
    int faulted;                   /* out: "*** stress: N threads faulted", or -1 */
    int other_crashers;            /* crasher-K threads among the other threads (-1: any) */
    const char *fault_block;       /* text of the fault block line, or NULL: none */
};

static char why_buffer[512];

static bool fail_because(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(why_buffer, sizeof why_buffer, format, arguments);
    va_end(arguments);
    return false;
}

/* After the crashing thread's part: "*** other threads (N), by tid:",
 * then N sections in tid order, each a header and its frames; a crasher
 * that also crashed has the crash function first. Moves *AT past them. */
static bool check_thread_sections(char **lines, int count, int *at,
                                  const struct expected_report *expected)
{
    int sections, crashers = 0, last_tid = 0;
    if (*at >= count || sscanf(lines[*at], "*** other threads (%d), by tid:", &sections) != 1)
        return expected->other_crashers <= 0 ? true
                                             : fail_because("no other threads: \"%s\"",
                                                            *at < count ? lines[*at] : "");
    for ((*at)++; sections > 0; sections--) {
        int tid, frames = 0;
        char name[32], state;
        if (*at >= count || sscanf(lines[*at], "*** thread %d \"%31[^\"]\" %c (", &tid, name, &state) != 3)
            return fail_because("thread line \"%s\"", *at < count ? lines[*at] : "");
        if (tid <= last_tid)
            return fail_because("thread %d after %d: not by tid", tid, last_tid);
        last_tid = tid;
        const char *counted = strstr(lines[*at], ", ");
        if (counted != NULL)
            sscanf(strrchr(lines[*at], ',') + 1, " %d frame", &frames);
        bool also = strstr(lines[*at], ": also crashed: signal 11 (SIGSEGV)") != NULL;
        crashers += starts_with(name, "crasher-");
        int first = ++*at;
        for (; *at < count && (lines[*at][0] == '#' || starts_with(lines[*at], "    inlined: ")); (*at)++)
            ;
        char function[96];
        snprintf(function, sizeof function, "(%s+", expected->crash_function);
        if (also && (first >= count || strstr(lines[first], function) == NULL))
            return fail_because("thread %d also crashed, but not in %s: \"%s\"", tid,
                                expected->crash_function, first < count ? lines[first] : "");
        if (frames > 0 && *at - first < frames)
            return fail_because("thread %d: %d frame lines, its header says %d", tid, *at - first,
                                frames);
    }
    if (expected->other_crashers >= 0 && crashers != expected->other_crashers)
        return fail_because("%d other crashers listed, want %d", crashers, expected->other_crashers);
    return true;
}

static bool check_text_report(char *output, struct expected_report *expected)
{
    static char *lines[MAX_LINES];
    int unterminated;
    int count = split_lines(output, lines, MAX_LINES, &unterminated);
    if (unterminated)
        return fail_because("unterminated last line \"%s\"", lines[count - 1]);
    if (count < 7)
        return fail_because("%d lines only", count);
    int starts = 0;
    for (int i = 0; i < count; i++)
        starts += starts_with(lines[i], "*** execinfo_ex: fatal signal");
    if (starts != 1)
        return fail_because("%d reports", starts);
    unsigned long fault;
    if (sscanf(lines[0], "*** execinfo_ex: fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault address 0x%lx",
               &fault) != 1 &&
        sscanf(lines[0], "*** execinfo_ex: fatal signal 11 (SIGSEGV), code 2 (SEGV_ACCERR), fault address 0x%lx",
               &fault) != 1)
        return fail_because("first line \"%s\"", lines[0]);
    int pid, tid;
    char name[32], program[1024];
    if (sscanf(lines[1], "*** pid %d, thread %d \"%31[^\"]\", program %1023s", &pid, &tid, name, program) != 4)
        return fail_because("second line \"%s\"", lines[1]);
    if (pid != expected->pid)
        return fail_because("pid %d, want %d", pid, (int)expected->pid);
    int crasher;
    if (expected->crasher_thread) {
        if (sscanf(name, "crasher-%d", &crasher) != 1)
            return fail_because("thread \"%s\" is not a crasher", name);
        if (fault != 0x100 + 16ul * (unsigned long)crasher)
            return fail_because("fault address 0x%lx is not thread %s's", fault, name);
    } else if (expected->fault_address != 0 && fault != expected->fault_address) {
        return fail_because("fault address 0x%lx, want 0x%lx", fault, expected->fault_address);
    }
    int year, month, day;
    if (sscanf(lines[2], "*** time %4d-%2d-%2dT", &year, &month, &day) != 3 || year < 2020 ||
        lines[2][strlen(lines[2]) - 1] != 'Z')
        return fail_because("time line \"%s\"", lines[2]);
    int frames;
    if (sscanf(lines[3], "*** backtrace (%d frames, the faulting instruction first):", &frames) != 1 ||
        frames < 2 || frames > 256)
        return fail_because("backtrace line \"%s\"", lines[3]);
    int at = 4;
    for (int i = 0; i < frames; i++, at++) {
        if (at >= count)
            return fail_because("report ends in frame %d of %d", i, frames);
        char prefix[16];
        snprintf(prefix, sizeof prefix, i < 10 ? "#%d  " : "#%d ", i);
        if (!starts_with(lines[at], prefix) || !is_frame_line(lines[at] + strlen(prefix)))
            return fail_because("frame line \"%s\"", lines[at]);
    }
    char function[96];
    snprintf(function, sizeof function, "(%s+", expected->crash_function);
    if (strstr(lines[4], function) == NULL)
        return fail_because("frame 0 is not %s: \"%s\"", expected->crash_function, lines[4]);
    if (at >= count || strcmp(lines[at], "*** modules of the trace:") != 0)
        return fail_because("no modules after the frames: \"%s\"", at < count ? lines[at] : "");
    int modules = 0;
    for (at++; at < count && starts_with(lines[at], "  0x"); at++, modules++)
        if (strstr(lines[at], " bias 0x") == NULL)
            return fail_because("module line \"%s\"", lines[at]);
    if (modules < 2)
        return fail_because("%d modules", modules);
    if (expected->registers) {
        /* 18 registers, four a line. */
        if (at >= count || strcmp(lines[at], "*** registers:") != 0)
            return fail_because("no registers: \"%s\"", at < count ? lines[at] : "");
        at++;
        for (int i = 0; i < 5; i++, at++)
            if (at >= count || !starts_with(lines[at], "  ") || strstr(lines[at], " 0x") == NULL)
                return fail_because("register line \"%s\"", at < count ? lines[at] : "");
        if (strstr(lines[at - 1], "rip 0x") == NULL)
            return fail_because("no rip in \"%s\"", lines[at - 1]);
    }
    if (!check_thread_sections(lines, count, &at, expected))
        return false;
    if (expected->faulted == 0) {
        /* The program's crash callback comes first after the trace. */
        if (at >= count || sscanf(lines[at], "*** stress: %d threads faulted", &expected->faulted) != 1)
            return fail_because("no line from the crash callback: \"%s\"", at < count ? lines[at] : "");
        at++;
    }
    if (expected->hooks) {
        /* docs/HEAP_REPORT.md: the fault block, then the guards of every block. */
        if (at >= count || strcmp(lines[at], "*** heap: the fault address") != 0)
            return fail_because("no heap section: \"%s\"", at < count ? lines[at] : "");
        at++;
        if (expected->fault_block == NULL) {
            if (at >= count || strcmp(lines[at], "*** is in no heap block nor near one") != 0)
                return fail_because("fault address in a block? \"%s\"", at < count ? lines[at] : "");
            at++;
        } else {
            if (at >= count || strstr(lines[at], expected->fault_block) == NULL)
                return fail_because("fault block line \"%s\", want \"%s\"", at < count ? lines[at] : "",
                                    expected->fault_block);
            for (at++; at < count && strcmp(lines[at], "*** heap: guards of every block") != 0; at++)
                if (!starts_with(lines[at], "*** allocated by thread ") &&
                    !starts_with(lines[at], "*** freed by thread ") && !is_frame_line(lines[at]))
                    return fail_because("fault block section line \"%s\"", lines[at]);
        }
        if (at >= count || strcmp(lines[at], "*** heap: guards of every block") != 0)
            return fail_because("no guard section: \"%s\"", at < count ? lines[at] : "");
        int damaged = 0;
        /* Each damaged block: its line, "allocated by" and, for a freed
         * block the quarantine still has, "freed by", with their frames. */
        for (at++; at < count && strcmp(lines[at], "*** all intact") != 0 &&
                   strcmp(lines[at], "*** end of damaged blocks") != 0; at++) {
            if (starts_with(lines[at], "*** allocated by thread ") ||
                starts_with(lines[at], "*** freed by thread ") || is_frame_line(lines[at]))
                continue;
            if ((starts_with(lines[at], "*** heap-buffer-overflow: ") ||
                 starts_with(lines[at], "*** heap-buffer-underflow: ") ||
                 starts_with(lines[at], "*** heap-use-after-free: ")) &&
                strstr(lines[at], "-byte block at 0x") && strstr(lines[at], ", damaged at offset "))
                damaged++;
            else
                return fail_because("damaged block line \"%s\"", lines[at]);
        }
        if (at >= count)
            return fail_because("guard section without end (%d damaged so far)", damaged);
        if (strcmp(lines[at], damaged == 0 ? "*** all intact" : "*** end of damaged blocks") != 0)
            return fail_because("guard section ends \"%s\" after %d damaged", lines[at], damaged);
        if (expected->damaged >= 0 && damaged != expected->damaged)
            return fail_because("%d damaged blocks reported, %d seen before the crash", damaged,
                                expected->damaged);
        at++;
    }
    if (at != count - 1 || strcmp(lines[at], "*** end of report") != 0)
        return fail_because("line %d of %d is \"%s\", want the end of the report", at, count,
                            at < count ? lines[at] : "");
    return true;
}

static int count_of(const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle))
        count++;
    return count;
}

static bool check_json_report(char *output, struct expected_report *expected)
{
    size_t length = strlen(output);
    if (length == 0 || output[length - 1] != '\n')
        return fail_because("report does not end with a newline");
    if (!json_is_valid(output))
        return fail_because("not one valid JSON object");
    if (count_of(output, "\"format\":\"execinfo_ex crash report 1\"") != 1)
        return fail_because("not exactly one report");
    char needle[128];
    const char *wanted[] = { "\"signal\":11", "\"signal_name\":\"SIGSEGV\"",
                             "\"code_name\":\"SEGV_", "\"frames\":[", "\"modules\":[" };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (strstr(output, wanted[i]) == NULL)
            return fail_because("no %s", wanted[i]);
    snprintf(needle, sizeof needle, "\"pid\":%d,", (int)expected->pid);
    if (strstr(output, needle) == NULL)
        return fail_because("no %s", needle);
    unsigned long fault;
    const char *fault_at = strstr(output, "\"fault_address\":\"0x");
    if (fault_at == NULL || sscanf(fault_at, "\"fault_address\":\"0x%lx\"", &fault) != 1)
        return fail_because("no fault address");
    if (expected->crasher_thread) {
        const char *name = strstr(output, "\"thread_name\":\"crasher-");
        int crasher;
        if (name == NULL || sscanf(name, "\"thread_name\":\"crasher-%d\"", &crasher) != 1)
            return fail_because("thread is not a crasher");
        if (fault != 0x100 + 16ul * (unsigned long)crasher)
            return fail_because("fault address 0x%lx is not crasher-%d's", fault, crasher);
    } else if (expected->fault_address != 0 && fault != expected->fault_address) {
        return fail_because("fault address 0x%lx, want 0x%lx", fault, expected->fault_address);
    }
    /* Frame 0 is the first "function" of the frames array. */
    const char *frames = strstr(output, "\"frames\":[");
    const char *function = strstr(frames, "\"function\":");
    snprintf(needle, sizeof needle, "\"function\":\"%s\"", expected->crash_function);
    if (function == NULL || !starts_with(function, needle))
        return fail_because("frame 0 is not %s", expected->crash_function);
    if (expected->faulted == 0) {
        const char *member = strstr(output, ",\"stress_faulted\":");
        if (member == NULL || sscanf(member, ",\"stress_faulted\":%d", &expected->faulted) != 1)
            return fail_because("no member from the crash callback");
    }
    if (expected->registers && (strstr(output, "\"registers\":{") == NULL ||
                                strstr(output, "\"rip\":\"0x") == NULL))
        return fail_because("no registers");
    if (expected->hooks) {
        const char *block = strstr(output, "\"heap_fault_block\":");
        const char *damaged = strstr(output, "\"heap_damaged\":[");
        if (block == NULL || damaged == NULL)
            return fail_because("no heap members");
        if (expected->fault_block == NULL ? !starts_with(block, "\"heap_fault_block\":null")
                                          : !starts_with(block, "\"heap_fault_block\":{\"kind\":\"inside\""))
            return fail_because("heap_fault_block %.60s", block);
        int count = count_of(damaged, "{\"kind\":\"heap-buffer-overflow\"") +
                    count_of(damaged, "{\"kind\":\"heap-buffer-underflow\"") +
                    count_of(damaged, "{\"kind\":\"heap-use-after-free\"");
        if (expected->damaged >= 0 && count != expected->damaged)
            return fail_because("%d damaged blocks reported, %d seen before the crash", count,
                                expected->damaged);
        if (expected->damaged == 0 && !starts_with(damaged, "\"heap_damaged\":[]"))
            return fail_because("heap_damaged is not empty");
    } else if (strstr(output, "\"heap_") != NULL) {
        return fail_because("heap members without the hook layer");
    }
    return true;
}

static bool check_report(char *output, struct expected_report *expected)
{
    return expected->json ? check_json_report(output, expected) : check_text_report(output, expected);
}

struct tally {
    int runs, complete, hangs, wrong_death, bad_reports;
    double slowest, total_seconds;
};

static void note_failure(const char *title, int run, const char *seed_text,
                         const struct run_result *result, const char *why, const char *output)
{
    char status[96];
    fprintf(stderr, "%s: run %d (%s): %s; %s\n", title, run, seed_text,
            describe_status(result, status, sizeof status), why);
    show_output(output);
}

/* ---- simultaneous crashes ---------------------------------------------------- */

static char temporary_dir[64];

/* The report file of a run, malloc'd ("" if there is none); removed. */
static char *take_file(const char *path)
{
    size_t capacity = 1 << 16, used = 0;
    char *text = malloc(capacity);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t got;
        for (;;) {
            if (used + 1 == capacity)
                text = realloc(text, capacity *= 2);
            got = read(fd, text + used, capacity - 1 - used);
            if (got <= 0)
                break;
            used += (size_t)got;
        }
        close(fd);
        unlink(path);
    }
    text[used] = '\0';
    return text;
}

static int simultaneous_crashes(int runs)
{
    char path[4096];
    program_path(path, sizeof path, "crash_together");
    struct tally tally = { 0 };
    int to_file = 0;
    long faulted = 0, crashers = 0;
    for (int run = 0; run < runs; run++) {
        /* Every combination of text or JSON, with or without the hook layer,
         * to stderr or to report= with registers. */
        bool json = run % 2 == 1, hooks = run / 2 % 2 == 1, file = run / 4 % 2 == 1;
        char seed[32], threads[16], options[512], report_path[128];
        snprintf(seed, sizeof seed, "%d", run);
        snprintf(threads, sizeof threads, "%d", 8 + run % 3 * 8);
        snprintf(report_path, sizeof report_path, "%s/crash-%d", temporary_dir, run);
        snprintf(options, sizeof options, "EXECINFO_EX_OPTIONS=format=%s%s%s", json ? "json" : "text",
                 file ? ":registers=1:report=" : "", file ? report_path : "");
        char *argv[] = { path, threads, seed, NULL };
        char *environment[] = { options, hooks ? hooks_preload : NULL, NULL };
        struct run_result result;
        run_bounded(argv, environment, 30.0, &result);
        tally.runs++;
        tally.total_seconds += result.seconds;
        if (result.seconds > tally.slowest)
            tally.slowest = result.seconds;
        char *copy = file ? take_file(report_path) : strdup(result.output);
        to_file += file;
        struct expected_report expected = {
            .pid = result.pid, .hooks = hooks, .json = json, .registers = file,
            .crash_function = "crash_now", .crasher_thread = true, .damaged = hooks ? 0 : -1,
            .faulted = 0, .other_crashers = atoi(threads) - 1,
        };
        char described[320];
        snprintf(described, sizeof described, "%s, %s, %s threads, %s", json ? "json" : "text",
                 hooks ? "hooks preloaded" : "no hooks", threads, file ? report_path : "stderr");
        if (result.hung) {
            tally.hangs++;
            note_failure("simultaneous crashes", run, described, &result, "hung", result.output);
        } else if (!WIFSIGNALED(result.status) || WTERMSIG(result.status) != SIGSEGV) {
            tally.wrong_death++;
            note_failure("simultaneous crashes", run, described, &result, "not a SIGSEGV death",
                         result.output);
        } else if (file && result.length != 0) {
            tally.bad_reports++;
            note_failure("simultaneous crashes", run, described, &result,
                         "output on stderr with report= a file", result.output);
        } else if (!check_report(copy, &expected)) {
            tally.bad_reports++;
            note_failure("simultaneous crashes", run, described, &result, why_buffer,
                         file ? copy : result.output);
        } else {
            tally.complete++;
            faulted += expected.faulted;
            crashers += atoi(threads);
        }
        free(copy);
        free(result.output);
    }
    printf("simultaneous crashes: %d runs, %d reports complete (%d to a report= file), %d hangs, "
           "%d wrong deaths, %d bad reports; %ld of %ld threads had faulted when the report "
           "was written; slowest run %.2f s, %.1f s in all\n", tally.runs, tally.complete, to_file,
           tally.hangs, tally.wrong_death, tally.bad_reports, faulted, crashers, tally.slowest,
           tally.total_seconds);
    fflush(stdout);
    return tally.complete == tally.runs ? 0 : 1;
}

/* ---- exit while threads allocate ------------------------------------------------ */

/* An mtrace file (docs/MTRACE.md): "= Start", then whole event lines
 * "@ WHERE OP 0xPOINTER [0xSIZE]", every one ended. */
static bool check_trace(char *text, int *events)
{
    size_t length = strlen(text);
    if (length == 0)
        return fail_because("empty trace");
    if (text[length - 1] != '\n')
        return fail_because("the trace ends inside a line");
    static char *lines[1 << 20];
    int unterminated;
    int count = split_lines(text, lines, 1 << 20, &unterminated);
    if (count == 1 << 20)
        return fail_because("trace too long to check");
    if (strcmp(lines[0], "= Start") != 0)
        return fail_because("trace starts \"%s\"", lines[0]);
    for (int i = 1; i < count; i++) {
        char where[1024], op[4], pointer[32];
        if (strcmp(lines[i], "= End") == 0)
            continue;
        if (sscanf(lines[i], "@ %1023s %3s %31s", where, op, pointer) != 3 || strlen(op) != 1 ||
            !strchr("+-<>!", op[0]) || !starts_with(pointer, "0x"))
            return fail_because("trace line %d \"%s\"", i + 1, lines[i]);
    }
    *events = count - 1;
    return true;
}

static int exit_while_allocating(int runs)
{
    char path[4096];
    program_path(path, sizeof path, "exit_storm");
    static const char *const ways[] = { "exit", "thread-exit", "return" };
    struct tally tally = { 0 };
    int traced = 0;
    long events = 0;
    for (int run = 0; run < runs; run++) {
        const char *way = ways[run % 3];
        int status = 40 + run % 7;
        bool trace = run % 4 == 3;
        char status_text[16], seed[32], trace_path[128], trace_variable[160];
        snprintf(status_text, sizeof status_text, "%d", status);
        snprintf(seed, sizeof seed, "%d", run);
        snprintf(trace_path, sizeof trace_path, "%s/trace-%d", temporary_dir, run);
        snprintf(trace_variable, sizeof trace_variable, "MALLOC_TRACE=%s", trace_path);
        char *argv[] = { path, (char *)way, status_text, seed, NULL };
        char *environment[] = { trace ? trace_variable : NULL, NULL };
        struct run_result result;
        run_bounded(argv, environment, 30.0, &result);
        char *trace_text = trace ? take_file(trace_path) : NULL;
        int trace_events = 0;
        tally.runs++;
        tally.total_seconds += result.seconds;
        if (result.seconds > tally.slowest)
            tally.slowest = result.seconds;
        char described[96];
        snprintf(described, sizeof described, "%s %d, seed %d%s", way, status, run,
                 trace ? ", mtrace" : "");
        if (result.hung) {
            tally.hangs++;
            note_failure("exit while allocating", run, described, &result, "hung", result.output);
        } else if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != status) {
            tally.wrong_death++;
            note_failure("exit while allocating", run, described, &result, "wrong status",
                         result.output);
        } else if (result.length != 0) {
            tally.bad_reports++;
            note_failure("exit while allocating", run, described, &result, "unexpected output",
                         result.output);
        } else if (trace && !check_trace(trace_text, &trace_events)) {
            tally.bad_reports++;
            note_failure("exit while allocating", run, described, &result, why_buffer, "");
        } else {
            tally.complete++;
            traced += trace;
            events += trace_events;
        }
        free(trace_text);
        free(result.output);
    }
    printf("exit while 32 threads allocate: %d runs, %d exited with the right status and nothing "
           "written (%d traced by mtrace, %ld events in whole lines), %d hangs, %d wrong statuses, "
           "%d bad outputs; slowest run %.2f s, %.1f s in all\n", tally.runs, tally.complete,
           traced, events, tally.hangs, tally.wrong_death, tally.bad_reports, tally.slowest,
           tally.total_seconds);
    fflush(stdout);
    return tally.complete == tally.runs ? 0 : 1;
}

/* ---- a scribbled heap, then a crash -------------------------------------------------- */

static int scribbled_heap(int runs)
{
    char path[4096];
    program_path(path, sizeof path, "heap_scribble");
    struct tally tally = { 0 };
    int damaged_total = 0, in_block = 0;
    for (int run = 0; run < runs; run++) {
        bool json = run % 2 == 1, fault_in_block = run / 2 % 2 == 1;
        char seed[32];
        snprintf(seed, sizeof seed, "%d", run * 7919 + 17);
        char *argv[] = { path, seed, fault_in_block ? "block" : "null", NULL };
        char *environment[] = { json ? "EXECINFO_EX_OPTIONS=format=json" : "EXECINFO_EX_OPTIONS=",
                                NULL };
        struct run_result result;
        run_bounded(argv, environment, 30.0, &result);
        tally.runs++;
        tally.total_seconds += result.seconds;
        if (result.seconds > tally.slowest)
            tally.slowest = result.seconds;
        char described[96];
        snprintf(described, sizeof described, "seed %s, %s, fault %s", seed, json ? "json" : "text",
                 argv[2]);
        /* First line, from the program: what it did and what the heap
         * check saw before the crash. The report follows. */
        struct expected_report expected = {
            .hooks = true, .json = json, .crash_function = "crash_now", .faulted = -1,
        };
        int pid = 0, damaged = -1, headers = 0, guards = 0, around = 0, freed = 0;
        unsigned long fault = 0;
        char block_line[160] = "";
        char *report = strchr(result.output, '\n');
        if (sscanf(result.output,
                   "scribble: pid %d, headers %d, guards %d, around %d, freed %d, damaged %d, fault 0x%lx, block %159[^\n]",
                   &pid, &headers, &guards, &around, &freed, &damaged, &fault, block_line) != 8 ||
            report == NULL) {
            tally.bad_reports++;
            note_failure("scribbled heap", run, described, &result, "no facts line from the program",
                         result.output);
            free(result.output);
            continue;
        }
        report++;
        expected.pid = pid;
        if (pid != result.pid)
            fprintf(stderr, "scribbled heap: run %d: the program says pid %d, it is %d\n", run, pid,
                    (int)result.pid);
        expected.damaged = damaged;
        expected.fault_address = fault;
        /* Text: "*** 0x... is at offset N inside a live M-byte block at 0x..."; JSON: inside. */
        expected.fault_block = fault_in_block ? block_line : NULL;
        char *copy = strdup(report);
        if (result.hung) {
            tally.hangs++;
            note_failure("scribbled heap", run, described, &result, "hung", result.output);
        } else if (!WIFSIGNALED(result.status) || WTERMSIG(result.status) != SIGSEGV) {
            tally.wrong_death++;
            note_failure("scribbled heap", run, described, &result, "not a SIGSEGV death",
                         result.output);
        } else if (damaged < 1) {
            tally.bad_reports++;
            note_failure("scribbled heap", run, described, &result,
                         "the program saw no damage after scribbling", result.output);
        } else if (!check_report(copy, &expected)) {
            tally.bad_reports++;
            note_failure("scribbled heap", run, described, &result, why_buffer, result.output);
        } else {
            tally.complete++;
            damaged_total += damaged;
            in_block += fault_in_block;
        }
        free(copy);
        free(result.output);
    }
    printf("scribbled heap, then SIGSEGV: %d runs, %d reports complete (%d damaged blocks listed, "
           "%d faults inside a block named), %d hangs, %d wrong deaths, %d bad reports; "
           "slowest run %.2f s, %.1f s in all\n", tally.runs, tally.complete, damaged_total,
           in_block, tally.hangs, tally.wrong_death, tally.bad_reports, tally.slowest,
           tally.total_seconds);
    fflush(stdout);
    return tally.complete == tally.runs ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: stress_run SECONDS RUNS signals|fork|crashes|exit|scribble...\n");
        return 2;
    }
    int seconds = atoi(argv[1]), runs = atoi(argv[2]);
    bin_dir = getenv("STRESS_BIN");
    build_dir = getenv("EXECINFO_EX_BUILD");
    if (seconds <= 0 || runs <= 0 || bin_dir == NULL || build_dir == NULL ||
        getenv("FIXTURE_LIB") == NULL) {
        fprintf(stderr, "stress_run: SECONDS and RUNS > 0, STRESS_BIN, EXECINFO_EX_BUILD and "
                        "FIXTURE_LIB set\n");
        return 2;
    }
    snprintf(hooks_preload, sizeof hooks_preload, "LD_PRELOAD=%s/libexecinfo_ex_hooks.so", build_dir);
    snprintf(temporary_dir, sizeof temporary_dir, "/tmp/execinfo_ex_stress.XXXXXX");
    if (mkdtemp(temporary_dir) == NULL) {
        perror("stress_run: mkdtemp");
        return 2;
    }
    int failed = 0;
    double start = stress_now();
    for (int i = 3; i < argc; i++) {
        const char *target = argv[i];
        double target_start = stress_now();
        if (strcmp(target, "signals") == 0)
            failed += run_self_checking("signal_storm", "signals into busy threads", seconds, true);
        else if (strcmp(target, "fork") == 0)
            failed += run_self_checking("fork_storm", "fork while 8 threads allocate", seconds, false);
        else if (strcmp(target, "crashes") == 0)
            failed += simultaneous_crashes(runs);
        else if (strcmp(target, "exit") == 0)
            failed += exit_while_allocating(runs);
        else if (strcmp(target, "scribble") == 0)
            failed += scribbled_heap(runs);
        else {
            fprintf(stderr, "stress_run: no target %s\n", target);
            return 2;
        }
        fprintf(stderr, "  (%s: %.1f s)\n", target, stress_now() - target_start);
    }
    rmdir(temporary_dir);
    printf("stress: %d of %d targets failed, %.1f s\n", failed, argc - 3, stress_now() - start);
    return failed == 0 ? 0 : 1;
}
