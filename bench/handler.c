/* handler.c: part 7, the fatal-signal handler (issue 3), each sample a
 * fresh process (fork + exec), the contenders of a table alternating
 * within a sample, medians and quartiles kept.
 *
 * 7a. Fault to end of report: handler_crash_helper crashes 30 frames deep
 *     across its executable, four libraries and libc. t0 is stored in a
 *     shared page (handler_page.h) just before the faulting write, t1 in
 *     the crash callback, which the handler calls just before the
 *     report's end line; the report goes to the child's stderr, which is
 *     /dev/null. format=text, format=json, and text with the crash in a
 *     thread created after the install. Also, for the same program with
 *     the handler and without it: fault to the moment this process has
 *     reaped the dead child. One run of each format is checked first,
 *     with its report read through a pipe.
 * 7b. Load and install time in a program of ten shared libraries
 *     (handler_load_helper_*): exec to main with our library and without
 *     (also preloaded with handler=1, and with no separate debug files),
 *     our constructor bracketed by the tiny libraries' constructors, the
 *     install call itself, and the index build of the static variant.
 * 7c. Memory: the alternate stack of a thread created after the install,
 *     the index's mappings, the library's static data, VmRSS.
 *
 * BENCH_CRASH_OPTIONS=OPTIONS gives 7a's crashes EXECINFO_EX_OPTIONS (say
 * index_cache=0); BENCH_ONLY=handler (bench/main.c) runs part 7 alone. */
#define _GNU_SOURCE
#include "bench.h"
#include "handler_page.h"
#include "timing.h"

#include <execinfo_ex.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLES 101

extern char **environ;

static struct handler_page *page;
static int page_fd;

static void page_create(void)
{
    if (page != NULL)
        return;
    page_fd = memfd_create("bench_handler_page", 0); /* inherited across exec */
    if (page_fd < 0 || ftruncate(page_fd, 4096) != 0)
        bench_fail("memfd_create: %s", strerror(errno));
    page = handler_page_map(page_fd);
    if (page == NULL)
        bench_fail("mmap of the shared page: %s", strerror(errno));
}

/* Ours, less EXECINFO_EX_OPTIONS and LD_PRELOAD, plus up to two EXTRA. */
static char **child_environment(const char *extra1, const char *extra2)
{
    static char *list[512];
    size_t count = 0;

    for (char **entry = environ; *entry != NULL && count < 509; entry++)
        if (strncmp(*entry, "EXECINFO_EX_OPTIONS=", 20) != 0 &&
            strncmp(*entry, "LD_PRELOAD=", 11) != 0)
            list[count++] = *entry;
    if (extra1 != NULL)
        list[count++] = (char *)extra1;
    if (extra2 != NULL)
        list[count++] = (char *)extra2;
    list[count] = NULL;
    return list;
}

struct child {
    const char *program;       /* in bench_directory() */
    const char *mode;          /* argv[2], or NULL */
    const char *env1, *env2;
};

/* Run CHILD once with a cleared page. Its stdout goes to /dev/null, its
 * stderr to /dev/null or, with REPORT non-NULL, into REPORT (capacity
 * CAPACITY). Core dumps are off (RLIMIT_CORE 0), so that a dump written
 * or not does not change the timings. Returns the wait status; *REAPED_NS
 * is the time waitpid returned. */
static int run_child(const struct child *child, char *report, size_t capacity, uint64_t *reaped_ns)
{
    char path[PATH_MAX], fd_text[16];
    int pipe_fds[2] = { -1, -1 };

    snprintf(path, sizeof path, "%s/%s", bench_directory(), child->program);
    snprintf(fd_text, sizeof fd_text, "%d", page_fd);
    char *argv[] = { path, fd_text, (char *)child->mode, NULL };
    /* BENCH_CRASH_OPTIONS: the crash rows of 7a under these options (an
     * index_cache= directory, cold or none: issue 26's cold crash). */
    static char crash_options[4200];
    const char *extra1 = child->env1, *given = getenv("BENCH_CRASH_OPTIONS");
    if (extra1 == NULL && given != NULL && strcmp(child->program, "handler_crash_helper") == 0) {
        snprintf(crash_options, sizeof crash_options, "EXECINFO_EX_OPTIONS=%s", given);
        extra1 = crash_options;
    }
    char **environment = child_environment(extra1, child->env2);
    memset(page, 0, sizeof *page);
    if (report != NULL && pipe(pipe_fds) != 0)
        bench_fail("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("fork: %s", strerror(errno));
    if (pid == 0) {
        struct rlimit no_core = { 0, 0 };
        setrlimit(RLIMIT_CORE, &no_core);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(report != NULL ? pipe_fds[1] : null, 2);
        if (report != NULL) {
            close(pipe_fds[0]);
            close(pipe_fds[1]);
        }
        close(null);
        page->exec_ns = now_ns();
        execve(path, argv, environment);
        _exit(127);
    }
    if (report != NULL) {
        close(pipe_fds[1]);
        bench_read_all(pipe_fds[0], report, capacity);
        close(pipe_fds[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            bench_fail("waitpid: %s", strerror(errno));
    }
    *reaped_ns = now_ns();
    return status;
}

/* The value at fraction Q (0..1) of COUNT values, nearest rank. */
static double quantile(const double *values, size_t count, double q)
{
    double sorted[count ? count : 1];
    if (count == 0)
        return 0;
    memcpy(sorted, values, count * sizeof *values);
    qsort(sorted, count, sizeof *sorted, compare_doubles);
    size_t rank = (size_t)(q * (double)(count - 1) + 0.5);
    return sorted[rank];
}

static size_t count_of(const char *text, const char *needle)
{
    size_t count = 0;
    for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle))
        count++;
    return count;
}

static int ends_with(const char *text, const char *tail)
{
    size_t length = strlen(text), tail_length = strlen(tail);
    return length >= tail_length && strcmp(text + length - tail_length, tail) == 0;
}

/* ---- 7a: fault to end of report ---- */

enum { CRASH_TEXT, CRASH_JSON, CRASH_THREAD, CRASH_NONE, CRASH_KINDS };
static const struct child crash_children[CRASH_KINDS] = {
    { "handler_crash_helper", "text", NULL, NULL },
    { "handler_crash_helper", "json", NULL, NULL },
    { "handler_crash_helper", "thread", NULL, NULL },
    { "handler_crash_helper", "none", NULL, NULL },
};
static const char *const crash_names[CRASH_KINDS] = { "format=text", "format=json",
                                                      "text, thread", "no handler" };

static void check_crash_status(int kind, int status)
{
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
        bench_fail("handler_crash_helper %s: status %#x, not a death by SIGSEGV",
                   crash_children[kind].mode, status);
    if (page->fault_ns == 0)
        bench_fail("handler_crash_helper %s did not reach the fault", crash_children[kind].mode);
    if (kind == CRASH_NONE) {
        if (page->callback_calls != 0)
            bench_fail("handler_crash_helper none: a crash callback ran");
        return;
    }
    if (page->callback_calls != 1 || page->callback_signo != SIGSEGV ||
        page->callback_format != (kind == CRASH_JSON ? BACKTRACE_REPORT_JSON : BACKTRACE_REPORT_TEXT))
        bench_fail("handler_crash_helper %s: callback calls %d, signal %d, format %d",
                   crash_children[kind].mode, page->callback_calls, page->callback_signo,
                   page->callback_format);
    if (page->callback_frames != HANDLER_CRASH_FRAMES)
        bench_fail("handler_crash_helper %s: the faulting context has %d frames, not %d",
                   crash_children[kind].mode, page->callback_frames, HANDLER_CRASH_FRAMES);
}

/* One run of each format with the report captured: it must be the whole
 * report of a 30-frame trace in 6 modules, the program's frames named. */
static void check_reports(size_t *text_bytes, size_t *json_bytes)
{
    static char report[256 * 1024];
    uint64_t reaped;

    int status = run_child(&crash_children[CRASH_TEXT], report, sizeof report, &reaped);
    check_crash_status(CRASH_TEXT, status);
    char frames_line[64];
    snprintf(frames_line, sizeof frames_line, "*** backtrace (%d frames", HANDLER_CRASH_FRAMES);
    const char *modules = strstr(report, "*** modules of the trace:\n");
    if (strstr(report, frames_line) == NULL || modules == NULL ||
        count_of(modules, "\n  0x") != 6 || !ends_with(report, "*** end of report\n") ||
        strstr(report, "(handler_m4_level+0x") == NULL ||
        strstr(report, "(handler_m1_enter+0x") == NULL ||
        strstr(report, "handler_crash_helper(descend+0x") == NULL ||
        strstr(report, " at bench/handler_crash_helper.c:") == NULL ||
        strstr(report, "handler_crash_helper(+0x") != NULL ||
        strstr(report, ".so(+0x") != NULL)
        bench_fail("the text report is not a named 30-frame trace in 6 modules:\n%s", report);
    *text_bytes = strlen(report);

    status = run_child(&crash_children[CRASH_JSON], report, sizeof report, &reaped);
    check_crash_status(CRASH_JSON, status);
    /* The top-level frames: the "threads" array (issue 23) repeats the
     * reporting thread's. */
    char *threads = strstr(report, "\"threads\":[");
    if (threads != NULL)
        *threads = '\0';
    int top_frames = count_of(report, "{\"address\":");
    if (threads != NULL)
        *threads = '"';
    if (report[0] != '{' || !ends_with(report, "}\n") || top_frames != HANDLER_CRASH_FRAMES ||
        count_of(report, "{\"path\":") != 6 ||
        strstr(report, "\"function\":\"handler_m4_level\"") == NULL)
        bench_fail("the JSON report is not a 30-frame trace in 6 modules:\n%s", report);
    *json_bytes = strlen(report);
}

static void bench_crash(struct results *results)
{
    static double report_ns[CRASH_KINDS][SAMPLES], reaped_ns[CRASH_KINDS][SAMPLES],
        start_ns[CRASH_KINDS][SAMPLES], faults[CRASH_KINDS][SAMPLES];
    long major_faults = 0;
    size_t text_bytes, json_bytes;

    check_reports(&text_bytes, &json_bytes);
    for (int sample = 0; sample < bench_count(SAMPLES); sample++) {
        for (int k = 0; k < CRASH_KINDS; k++) {
            int kind = (sample + k) % CRASH_KINDS;
            uint64_t reaped;
            int status = run_child(&crash_children[kind], NULL, 0, &reaped);
            check_crash_status(kind, status);
            report_ns[kind][sample] = (double)(page->callback_ns - page->fault_ns);
            reaped_ns[kind][sample] = (double)(reaped - page->fault_ns);
            start_ns[kind][sample] = (double)(page->main_ns - page->exec_ns);
            faults[kind][sample] = (double)(page->minflt_callback - page->minflt_fault);
            if (kind != CRASH_NONE)
                major_faults += page->majflt_callback - page->majflt_fault;
        }
    }

    printf("\n7. Fatal-signal handler (issue 3)\n");
    printf("\n7a. Fault to end of report: a SIGSEGV %d frames deep, in 6 modules (the\n"
           "   executable and libhandler_m1..m4.so, 5 levels each, plus libc's 2 start-up\n"
           "   frames), -O2 -g, no -rdynamic; report to stderr = /dev/null, lines=main.\n"
           "   t0 just before the faulting write, t1 in the crash callback (just before\n"
           "   the end line); 'reaped' is t0 to waitpid returning in this process\n"
           "   (death, teardown, wakeup). Median [25th-75th percentile] of %d fresh\n"
           "   processes each, interleaved. Reports checked once: %zu bytes of text,\n"
           "   %zu bytes of JSON.\n\n", HANDLER_CRASH_FRAMES, bench_count(SAMPLES), text_bytes, json_bytes);
    printf("   %-12s  %-24s %11s   %-24s %13s\n", "", "fault to end of report", "page faults",
           "fault to reaped", "vs no handler");
    for (int kind = 0; kind < CRASH_KINDS; kind++) {
        double report = median(report_ns[kind], bench_count(SAMPLES));
        double reaped = median(reaped_ns[kind], bench_count(SAMPLES));
        results->handler_reaped_ns[kind] = reaped;
        char report_text[64] = "-", faults_text[32] = "-";
        if (kind == CRASH_TEXT || kind == CRASH_JSON)
            results->handler_report_ns[kind] = report;
        if (kind != CRASH_NONE) {
            snprintf(report_text, sizeof report_text, "%.1f us [%.1f-%.1f]", report / 1e3,
                     quantile(report_ns[kind], bench_count(SAMPLES), 0.25) / 1e3,
                     quantile(report_ns[kind], bench_count(SAMPLES), 0.75) / 1e3);
            snprintf(faults_text, sizeof faults_text, "%.0f", median(faults[kind], bench_count(SAMPLES)));
        }
        char reaped_text[64];
        snprintf(reaped_text, sizeof reaped_text, "%.1f us [%.1f-%.1f]", reaped / 1e3,
                 quantile(reaped_ns[kind], bench_count(SAMPLES), 0.25) / 1e3,
                 quantile(reaped_ns[kind], bench_count(SAMPLES), 0.75) / 1e3);
        printf("   %-12s  %-24s %11s   %-24s %12.2fx\n", crash_names[kind], report_text,
               faults_text, reaped_text, reaped / median(reaped_ns[CRASH_NONE], bench_count(SAMPLES)));
        if (kind == CRASH_THREAD)
            results->handler_thread_report_ns = report;
    }
    printf("   ('text, thread': format=text, the same chain in a thread created after\n"
           "   the install, main waiting in pthread_join: that thread's first walk is\n"
           "   the handler's. Page faults: minor faults from t0 to t1 (getrusage); %ld\n"
           "   major faults in all. With no handler there is no report and no t1: the\n"
           "   default action leaves the program no point to stamp. Its 'reaped' is the\n"
           "   reference: the handler's cost is about 'reaped' minus it. For scale,\n"
           "   start-up, exec to main, with the index build at load: %.2f ms)\n",
           major_faults, median(start_ns[CRASH_TEXT], bench_count(SAMPLES)) / 1e6);
}

/* ---- 7b and 7c: load, install, memory ---- */

enum { LOAD_PLAIN, LOAD_OURS, LOAD_PRELOAD, LOAD_NO_DEBUG, LOAD_STATIC, LOAD_KINDS };
static char preload_env[PATH_MAX + 16];
static struct child load_children[LOAD_KINDS] = {
    { "handler_load_helper_plain", NULL, NULL, NULL },
    { "handler_load_helper_ours", NULL, NULL, NULL },
    { "handler_load_helper_plain", NULL, preload_env, "EXECINFO_EX_OPTIONS=handler=1" },
    { "handler_load_helper_ours", NULL, "EXECINFO_EX_SYSTEM_DEBUG_ROOT=", NULL },
    { "handler_load_helper_static", NULL, NULL, NULL },
};
static const char *const load_names[LOAD_KINDS] = {
    "without our library", "linked with ours", "LD_PRELOAD, handler=1", "ours, no debug files",
    "static (.a)"
};

struct load_samples {
    double exec_to_main[SAMPLES], install[SAMPLES], install_again[SAMPLES], index[SAMPLES];
    double exec_to_constructor[SAMPLES], tiny2_to_tiny1[SAMPLES], tiny1_to_main[SAMPLES];
    double rss_main[SAMPLES], anon_main[SAMPLES], file_main[SAMPLES];
    double rss_end[SAMPLES], anon_end[SAMPLES], file_end[SAMPLES];
    double thread_resident[SAMPLES];
};

static const char *library_path(void)
{
    static char path[PATH_MAX];
    char joined[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/../libexecinfo_ex.so", bench_directory());
    if (realpath(joined, path) == NULL)
        bench_fail("realpath(%s): %s", joined, strerror(errno));
    return path;
}

static void print_static_size(void)
{
    char command[PATH_MAX + 32], line[512];
    snprintf(command, sizeof command, "size '%s' 2>&1", library_path());
    FILE *pipe = popen(command, "r");
    printf("   `size` of the library (text includes .rodata, .eh_frame; data is .data,\n"
           "   .data.rel.ro, .got, .dynamic...; bss is zero pages until touched):\n");
    while (pipe != NULL && fgets(line, sizeof line, pipe) != NULL)
        printf("     %s", line);
    if (pipe != NULL)
        pclose(pipe);
}

static void bench_load(struct results *results)
{
    static struct load_samples samples[LOAD_KINDS];
    struct handler_page last[LOAD_KINDS];
    int constructor_order_wrong = 0;

    snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", library_path());
    for (int sample = 0; sample < bench_count(SAMPLES); sample++) {
        for (int k = 0; k < LOAD_KINDS; k++) {
            int kind = (sample + k) % LOAD_KINDS;
            uint64_t reaped;
            int status = run_child(&load_children[kind], NULL, 0, &reaped);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                bench_fail("%s (%s): status %#x", load_children[kind].program, load_names[kind],
                           status);
            struct load_samples *s = &samples[kind];
            s->exec_to_main[sample] = (double)(page->main_ns - page->exec_ns);
            if (!page->constructor_order_ok)
                constructor_order_wrong = 1;
            s->exec_to_constructor[sample] = (double)(page->first_constructor_ns - page->exec_ns);
            s->tiny2_to_tiny1[sample] = (double)page->tiny2_to_tiny1_ns;
            s->tiny1_to_main[sample] = (double)page->tiny1_to_main_ns;
            s->install[sample] = (double)page->install_ns;
            s->install_again[sample] = (double)page->install_again_ns;
            s->index[sample] = (double)page->index_ns;
            s->rss_main[sample] = (double)page->rss_main;
            s->anon_main[sample] = (double)page->rss_anon_main;
            s->file_main[sample] = (double)page->rss_file_main;
            s->rss_end[sample] = (double)page->rss_end;
            s->anon_end[sample] = (double)page->rss_anon_end;
            s->file_end[sample] = (double)page->rss_file_end;
            s->thread_resident[sample] = (double)page->thread_resident_bytes;
            last[kind] = *page;
        }
    }
    /* The alternate stacks must be what the install promises. */
    if (last[LOAD_PLAIN].thread_ss_flags != SS_DISABLE || last[LOAD_PLAIN].main_ss_size != 0)
        bench_fail("a program without our library has an alternate signal stack");
    for (int kind = LOAD_OURS; kind <= LOAD_NO_DEBUG; kind++)
        if (last[kind].thread_ss_size == 0 || last[kind].main_ss_size == 0)
            bench_fail("%s: no alternate stack (main %zu, new thread %zu bytes, flags %d)",
                       load_names[kind], (size_t)last[kind].main_ss_size,
                       (size_t)last[kind].thread_ss_size, last[kind].thread_ss_flags);

    double plain = median(samples[LOAD_PLAIN].exec_to_main, bench_count(SAMPLES));
    double ours = median(samples[LOAD_OURS].exec_to_main, bench_count(SAMPLES));
    double preload = median(samples[LOAD_PRELOAD].exec_to_main, bench_count(SAMPLES));
    double install = median(samples[LOAD_OURS].install, bench_count(SAMPLES));
    double index = median(samples[LOAD_STATIC].index, bench_count(SAMPLES));
    results->handler_load_cost_ns = ours - plain;
    results->handler_install_ns = install;

    printf("\n7b. Load and install, a program linking %d tiny shared libraries\n"
           "   (handler_load_helper_*; %d modules in all with ours). Stamps: the child\n"
           "   just before execve, each tiny library's constructor (the loader runs\n"
           "   them tiny10 first, tiny1 last; ours is linked between tiny1 and tiny2,\n"
           "   so its constructor runs between their stamps; preloaded, after tiny1;\n"
           "   static, in the executable, after tiny1), first thing in main. Median\n"
           "   [25th-75th percentile] of %d fresh processes each, interleaved, in ms\n\n",
           HANDLER_TINY_LIBRARIES, (int)last[LOAD_STATIC].index_modules + 1, bench_count(SAMPLES));
    printf("   %-22s %-19s %9s %17s %13s %12s\n", "", "   exec to main", "- without",
           "exec to 1st ctor", "tiny2->tiny1", "tiny1->main");
    for (int kind = LOAD_PLAIN; kind <= LOAD_STATIC; kind++) {
        struct load_samples *s = &samples[kind];
        double value = median(s->exec_to_main, bench_count(SAMPLES));
        char cell[48];
        snprintf(cell, sizeof cell, "%5.2f [%.2f-%.2f]", value / 1e6,
                 quantile(s->exec_to_main, bench_count(SAMPLES), 0.25) / 1e6,
                 quantile(s->exec_to_main, bench_count(SAMPLES), 0.75) / 1e6);
        printf("   %-22s %-19s %9.2f %17.2f %13.2f %12.2f\n", load_names[kind], cell,
               (value - plain) / 1e6, median(s->exec_to_constructor, bench_count(SAMPLES)) / 1e6,
               median(s->tiny2_to_tiny1, bench_count(SAMPLES)) / 1e6, median(s->tiny1_to_main, bench_count(SAMPLES)) / 1e6);
    }
    if (constructor_order_wrong)
        printf("   (the constructors did not run tiny10 ... tiny1 in some processes: the\n"
               "   bracketing columns are not the library's constructor there)\n");
    double constructor = median(samples[LOAD_OURS].tiny2_to_tiny1, bench_count(SAMPLES)) -
                         median(samples[LOAD_PLAIN].tiny2_to_tiny1, bench_count(SAMPLES));
    double mapping = median(samples[LOAD_OURS].exec_to_constructor, bench_count(SAMPLES)) -
                     median(samples[LOAD_PLAIN].exec_to_constructor, bench_count(SAMPLES));
    printf("\n   linked with ours, over without: %.2f ms before the first constructor\n"
           "   (exec, mapping and relocating ours, libdw, libelf and theirs), %.2f ms\n"
           "   in our constructor (the index build, lines=main), %.2f ms in all\n",
           mapping / 1e6, constructor / 1e6, (ours - plain) / 1e6);
    printf("   with no separate debug files (EXECINFO_EX_SYSTEM_DEBUG_ROOT= empty: libc's\n"
           "   from libc6-dbg is not read, as on a machine without it): %.2f ms in our\n"
           "   constructor, %.2f ms in all\n",
           (median(samples[LOAD_NO_DEBUG].tiny2_to_tiny1, bench_count(SAMPLES)) -
            median(samples[LOAD_PLAIN].tiny2_to_tiny1, bench_count(SAMPLES))) / 1e6,
           (median(samples[LOAD_NO_DEBUG].exec_to_main, bench_count(SAMPLES)) - plain) / 1e6);
    printf("   index build in the static variant (priority-101 constructor to main; its\n"
           "   executable holds the library, so lines=main indexes the library's lines\n"
           "   too): %.2f ms [%.2f-%.2f]\n", index / 1e6,
           quantile(samples[LOAD_STATIC].index, bench_count(SAMPLES), 0.25) / 1e6,
           quantile(samples[LOAD_STATIC].index, bench_count(SAMPLES), 0.75) / 1e6);
    printf("   backtrace_install_fatal_handler(NULL), in main: %.1f us [%.1f-%.1f];\n"
           "   a second call in the same process: %.1f us\n", install / 1e3,
           quantile(samples[LOAD_OURS].install, bench_count(SAMPLES), 0.25) / 1e3,
           quantile(samples[LOAD_OURS].install, bench_count(SAMPLES), 0.75) / 1e3,
           median(samples[LOAD_OURS].install_again, bench_count(SAMPLES)) / 1e3);
    printf("   load-time cost (exec to main, ours minus without) + install call:\n"
           "   %.2f ms (%.2fx the whole start-up without); LD_PRELOAD with handler=1,\n"
           "   which installs at load: %.2f ms over without\n",
           (ours - plain + install) / 1e6, (ours + install) / plain, (preload - plain) / 1e6);
    results->handler_no_debug_ns = median(samples[LOAD_NO_DEBUG].exec_to_main, bench_count(SAMPLES)) - plain +
                                   median(samples[LOAD_NO_DEBUG].install, bench_count(SAMPLES));

    const struct handler_page *o = &last[LOAD_OURS];
    long page_size = sysconf(_SC_PAGESIZE);
    results->handler_thread_bytes = (double)(o->thread_guard_bytes + o->thread_ss_size +
                                             o->thread_above_bytes);
    printf("\n7c. Memory\n\n");
    printf("   per thread, a thread created after the install (linked with ours; the\n"
           "   same with LD_PRELOAD: %zu bytes):\n",
           (size_t)last[LOAD_PRELOAD].thread_ss_size);
    printf("     alternate stack ss_size %zu bytes (%zu KiB), guard below it %zu bytes\n"
           "     (%zu page, PROT_NONE), %zu bytes above it in the same mapping (the\n"
           "     library's bookkeeping): %zu KiB of address space; resident when the\n"
           "     thread starts: %.0f KiB (median); the installing thread: ss_size %zu\n",
           (size_t)o->thread_ss_size, (size_t)o->thread_ss_size / 1024,
           (size_t)o->thread_guard_bytes, (size_t)(o->thread_guard_bytes / (uint64_t)page_size),
           (size_t)o->thread_above_bytes, (size_t)(results->handler_thread_bytes / 1024),
           median(samples[LOAD_OURS].thread_resident, bench_count(SAMPLES)) / 1024, (size_t)o->main_ss_size);
    const struct handler_page *st = &last[LOAD_STATIC];
    printf("\n   per process:\n");
    printf("     symbol index of this program (static variant: %zu modules, %zu symbols,\n"
           "     %zu lines): %.1f KiB mapped\n", (size_t)st->index_modules,
           (size_t)st->index_symbols, (size_t)st->index_lines,
           (double)st->index_mapped / 1024);
    results->handler_index_bytes = (double)st->index_mapped;
    print_static_size();
    printf("\n     %-24s %10s %10s %10s   %s\n", "KiB, median", "VmRSS", "RssAnon", "RssFile",
           "(after the install, or the same point)");
    for (int kind = LOAD_PLAIN; kind <= LOAD_NO_DEBUG; kind++)
        printf("     %-24s %10.0f %10.0f %10.0f\n", load_names[kind],
               median(samples[kind].rss_end, bench_count(SAMPLES)), median(samples[kind].anon_end, bench_count(SAMPLES)),
               median(samples[kind].file_end, bench_count(SAMPLES)));
    double rss_plain = median(samples[LOAD_PLAIN].rss_end, bench_count(SAMPLES));
    double rss_ours = median(samples[LOAD_OURS].rss_end, bench_count(SAMPLES));
    results->handler_rss_delta_kib = rss_ours - rss_plain;
    printf("     ours minus without: %+.0f KiB VmRSS (%.2fx), %+.0f KiB anonymous;\n"
           "     ours at main, before the install: %.0f KiB VmRSS\n", rss_ours - rss_plain,
           rss_ours / rss_plain,
           median(samples[LOAD_OURS].anon_end, bench_count(SAMPLES)) -
               median(samples[LOAD_PLAIN].anon_end, bench_count(SAMPLES)),
           median(samples[LOAD_OURS].rss_main, bench_count(SAMPLES)));
}

void bench_handler(struct results *results)
{
    page_create();
    bench_crash(results);
    bench_load(results);
}
