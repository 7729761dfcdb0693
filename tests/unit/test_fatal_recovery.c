/* The fatal handler when the program goes on: signals it ignores, faults
 * its own handler deals with, breakpoints; and report files that are not
 * ours to replace. Each crashes for real in a child process. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>

#include "support.h"
#include "test_asm.h"
#include "crash_helpers.h"

/* ---- a sent signal the program ignores ---- */

static void ignore_then_get_killed_then_fault(void *context)
{
    (void)context;
    signal(SIGSEGV, SIG_IGN);
    install_or_exit(NULL);
    kill(getpid(), SIGSEGV);   /* ignored: no report, the program goes on */
    write_to_null();           /* a fault cannot be ignored: report, death */
}

Test(recovery, an_ignored_sent_signal_is_not_reported_and_spends_nothing, .timeout = 30)
{
    static struct child_result result;
    run_child(ignore_then_get_killed_then_fault, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(count_of(result.output, "*** execinfo_ex: fatal signal"), 1, "%s",
                 result.output);
    cr_assert(strstr(result.output, "(SEGV_MAPERR), fault address 0x10"), "%s", result.output);
}

/* ---- a fault the program's own handler deals with ---- */

static char *guarded_page;

/* Like a garbage collector's write barrier: unprotect the page and retry;
 * any other fault is not ours: take the default action on retry. */
static void write_barrier(int signo, siginfo_t *info, void *ucontext)
{
    (void)ucontext;
    if ((char *)info->si_addr >= guarded_page && (char *)info->si_addr < guarded_page + 4096) {
        mprotect(guarded_page, 4096, PROT_READ | PROT_WRITE);
        return;
    }
    signal(signo, SIG_DFL);
}

static void benign_fault_then_real_one(void *context)
{
    (void)context;
    guarded_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.sa_sigaction = write_barrier;
    barrier.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &barrier, NULL);
    install_or_exit(NULL);
    guarded_page[8] = 1;                 /* handled: the program goes on */
    if (guarded_page[8] != 1)
        _exit(3);
    write_to_null();                     /* the real crash */
}

Test(recovery, a_fault_handled_by_the_program_leaves_the_next_crash_its_report,
     .timeout = 30)
{
    static struct child_result result;
    run_child(benign_fault_then_real_one, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    cr_assert_eq(count_of(out, "*** execinfo_ex: fatal signal"), 2, "%s", out);
    cr_assert_eq(count_of(out, "*** end of report"), 2, "%s", out);
    cr_assert(strstr(out, "(benign_fault_then_real_one+"), "%s", out);
    cr_assert(strstr(out, "fault address 0x10, WRITE of size 4\n"), "the second report is the real one:\n%s", out);
}

/* ---- int3: frame 0 is the breakpoint, not what follows it ---- */

TEST_ASM_BREAKPOINT

static void hit_breakpoint(void *context)
{
    (void)context;
    install_or_exit(NULL);
    breakpoint_at_the_end();
}

Test(recovery, int3_reports_the_breakpoint_as_frame_zero, .timeout = 30)
{
    static struct child_result result;
    run_child(hit_breakpoint, NULL, &result);
    assert_died_by(&result, SIGTRAP);
    const char *out = result.output;
    cr_assert(strstr(out, TEST_BREAKPOINT_HEADLINE), "%s", out);
    const char *first = strstr(out, "#0  ");
    cr_assert_not_null(first, "%s", out);
    const char *end = strchr(first, '\n');
    cr_assert(strstr(first, "(breakpoint_at_the_end+0)") != NULL &&
              strstr(first, "(breakpoint_at_the_end+0)") < end, "%s", out);
    cr_assert_null(strstr(out, "function_after_the_breakpoint"), "%s", out);
    /* Its unwind rules were used: the walk goes on to the caller. */
    cr_assert(strstr(out, "(hit_breakpoint+0x"), "%s", out);
}

/* ---- report files that are not ours to replace ---- */

static void crash_to_file(void *context)
{
    install_or_exit(context);
    write_to_null();
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    chmod(path, mode);
}

Test(recovery, overwrite_replaces_our_own_file_and_makes_it_0600, .timeout = 30)
{
    static struct child_result result;
    char path[64], options[160];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_own_%d", (int)getpid());
    write_file(path, "an old report\n", 0644);
    snprintf(options, sizeof options, "report=%s:overwrite=1", path);
    run_child(crash_to_file, options, &result);
    assert_died_by(&result, SIGSEGV);
    struct stat info;
    cr_assert_eq(stat(path, &info), 0);
    cr_assert_eq(info.st_mode & 0777, 0600);
    char text[4096] = "";
    int fd = open(path, O_RDONLY);
    read_all(fd, text, sizeof text);
    close(fd);
    cr_assert(strncmp(text, "*** execinfo_ex: fatal signal", 29) == 0, "%s", text);
    cr_assert_null(strstr(text, "an old report"));
    unlink(path);
}

Test(recovery, overwrite_never_writes_through_a_second_name, .timeout = 30)
{
    static struct child_result result;
    char precious[64], link_path[64], options[160];
    snprintf(precious, sizeof precious, "/tmp/execinfo_ex_precious_%d", (int)getpid());
    snprintf(link_path, sizeof link_path, "/tmp/execinfo_ex_hardlink_%d", (int)getpid());
    write_file(precious, "precious data\n", 0644);
    unlink(link_path);
    cr_assert_eq(link(precious, link_path), 0);
    snprintf(options, sizeof options, "report=%s:overwrite=1", link_path);
    run_child(crash_to_file, options, &result);
    assert_died_by(&result, SIGSEGV);
    /* The report went to stderr; the file behind the link is untouched. */
    cr_assert(strstr(result.output, "*** execinfo_ex: fatal signal"), "%s", result.output);
    char text[256] = "";
    int fd = open(precious, O_RDONLY);
    read_all(fd, text, sizeof text);
    close(fd);
    cr_assert_str_eq(text, "precious data\n");
    struct stat info;
    cr_assert_eq(stat(precious, &info), 0);
    cr_assert_eq(info.st_mode & 0777, 0644);
    unlink(link_path);
    unlink(precious);
}

/* ---- the death after the report is the real one, siginfo included ---- */

static void traced_null_write(void)
{
    int quiet = open("/dev/null", O_WRONLY);
    dup2(quiet, 2);
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    raise(SIGSTOP);
    install_or_exit(NULL);
    write_to_null();
    _exit(0);
}

/* Follow the child's signals as a debugger would: the signal that kills it
 * after the report must carry the fault's siginfo, as without us. */
Test(recovery, the_reraised_signal_keeps_the_fault_siginfo, .timeout = 30)
{
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0)
        traced_null_write();
    int status, segv_stops = 0;
    siginfo_t last;
    memset(&last, 0, sizeof last);
    while (waitpid(child, &status, 0) == child && WIFSTOPPED(status)) {
        int signo = WSTOPSIG(status);
        if (signo == SIGSEGV) {
            cr_assert_eq(ptrace(PTRACE_GETSIGINFO, child, NULL, &last), 0);
            segv_stops++;
        }
        ptrace(PTRACE_CONT, child, NULL, (void *)(intptr_t)(signo == SIGSTOP ? 0 : signo));
    }
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status 0x%x", status);
    cr_assert_eq(segv_stops, 2, "the fault, then the death after the report");
    cr_assert_eq(last.si_code, SEGV_MAPERR, "si_code %d", last.si_code);
    cr_assert_eq(last.si_addr, (void *)16);
}
