/* The fatal handler at its edges (issue 11, items 6 to 11): a fault with
 * no address, report files that are not regular files, a program that
 * recovers with siglongjmp or aborts in its own handler, a call through
 * signal()'s old-handler pointer, a report file that stops taking bytes.
 * Each crashes for real in a child process; an alarm() in the child turns
 * a hang into a death by SIGALRM, which the assertions then reject. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>

#include "support.h"
#include "test_asm.h"
#include "crash_helpers.h"

#define HANG_BOUND 20 /* seconds: alarm() in each child */

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

static void temporary_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "/tmp/execinfo_ex_edges_%s_%d", name, (int)getpid());
    unlink(path);
}

static void read_file(const char *path, char *text, size_t capacity)
{
    text[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        read_all(fd, text, capacity);
        close(fd);
    }
}

/* Whether the python expression CONDITION holds for the JSON object r
 * that TEXT holds. */
static int json_holds(const char *text, const char *condition)
{
    char path[80], command[1024];
    temporary_path(path, sizeof path, "json");
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs(text, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys; r=json.load(open(\"%s\")); sys.exit(0 if (%s) else 1)'",
             path, condition);
    int status = system(command);
    unlink(path);
    return status == 0;
}

/* ---- item 6: a general-protection fault has no address ---- */

/* What a pointer read from a freed block holds under the hooks library. */
static volatile uintptr_t freed_pointer = 0xefefefefefefefefu;

__attribute__((noinline)) static long read_through_freed_pointer(void)
{
    return *(volatile long *)(freed_pointer + 8);
}

static void crash_non_canonical(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(context);
    _exit((int)read_through_freed_pointer());
}

Test(edges, a_fault_without_address_says_unknown_and_gives_hints, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_non_canonical, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    /* A general-protection fault has no page-fault code: a size, no direction. */
    assert_in(out, "(SIGSEGV), code 128 (SI_KERNEL), fault address unknown, access of size 8\n");
    cr_assert_null(strstr(out, "fault address 0x0"), "%s", out);
    /* The instruction's operand: the pointer's value plus the offset 8. */
    assert_in(out, "*** hint: the faulting instruction's memory operand [");
    assert_in(out, "+0x8] is 0xefefefefefefeff7: not canonical, near the free-fill pattern 0xef\n");
    assert_in(out, " holds 0xefefefefefefefef: not canonical, the free-fill pattern 0xef\n");
    assert_in(out, "(read_through_freed_pointer+");
}

Test(edges, a_fault_without_address_in_json, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_non_canonical, "format=json", &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(json_holds(result.output,
                         "r[\"fault_address\"] is None and r[\"fault_address_unknown\"] is True "
                         "and r[\"fault_hints\"][0][\"source\"] == \"operand\" "
                         "and r[\"fault_hints\"][0][\"value\"] == \"0xefefefefefefeff7\" "
                         "and r[\"fault_hints\"][0][\"expression\"].endswith(\"+0x8]\") "
                         "and r[\"fault_hints\"][0][\"non_canonical\"] is True "
                         "and r[\"fault_hints\"][0][\"free_fill\"] is True "
                         "and r[\"access\"] == {\"direction\": None, \"size\": 8} "
                         "and any(h[\"source\"] == \"register\" and "
                         "h[\"value\"] == \"0xefefefefefefefef\" for h in r[\"fault_hints\"])"),
              "%s", result.output);
}

static void crash_null_write(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(context);
    write_to_null();
}

Test(edges, a_fault_with_an_address_has_no_hints, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_null_write, "format=json", &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(json_holds(result.output,
                         "r[\"fault_address\"] == \"0x10\" and r[\"fault_address_unknown\"] is False "
                         "and r[\"fault_hints\"] == [] "
                         "and r[\"access\"] == {\"direction\": \"WRITE\", \"size\": 4}"),
              "%s", result.output);
    run_child(crash_null_write, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_null(strstr(result.output, "*** hint:"), "%s", result.output);
}

static void prepare_alarm(void *context)
{
    if (context != NULL)
        setenv("EXECINFO_EX_OPTIONS", context, 1);
    else
        unsetenv("EXECINFO_EX_OPTIONS");
    alarm(HANG_BOUND);
}

static void run_fixture(const char *name, char *const arguments[], const char *options,
                        struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/%s", getenv("EXECINFO_EX_TESTS"), name);
    char *argv[4] = { program, NULL, NULL, NULL };
    for (int i = 0; arguments != NULL && arguments[i] != NULL && i < 2; i++)
        argv[i + 1] = arguments[i];
    run_program(program, argv, prepare_alarm, (void *)options, result);
}

Test(edges, a_use_after_free_through_the_fill_says_the_heap_cannot_tell, .timeout = 60)
{
    static struct child_result result;
    run_fixture("freed_pointer", NULL, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    assert_in(out, "code 128 (SI_KERNEL), fault address unknown, access of size 8\n");
    assert_in(out, "+0x8] is 0xefefefefefefeff7: not canonical, near the free-fill pattern 0xef\n");
    assert_in(out, "*** heap: the fault address is unknown");
    cr_assert_null(strstr(out, "is in no heap block"), "%s", out);
    assert_in(out, "*** end of report");
}

/* ---- item 7: a report path that is a FIFO ---- */

Test(edges, a_fifo_as_report_file_sends_the_report_to_stderr_at_once, .timeout = 30)
{
    static struct child_result result;
    char path[80], options[160];
    temporary_path(path, sizeof path, "fifo");
    cr_assert_eq(mkfifo(path, 0600), 0);
    snprintf(options, sizeof options, "report=%s:overwrite=1", path);
    run_child(crash_null_write, options, &result);
    unlink(path);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "*** execinfo_ex: fatal signal 11 (SIGSEGV)");
    assert_in(result.output, "*** end of report");
}

Test(edges, a_fifo_as_heap_report_file_does_not_hang_free, .timeout = 60)
{
    static struct child_result result;
    char path[80], options[160];
    temporary_path(path, sizeof path, "heap_fifo");
    cr_assert_eq(mkfifo(path, 0600), 0);
    snprintf(options, sizeof options, "on_error=report:report=%s", path);
    char *arguments[] = { "double_free", NULL };
    run_fixture("heap_misuse", arguments, options, &result);
    unlink(path);
    assert_exited_with(&result, 0);
    assert_in(result.output, "*** execinfo_ex: heap error: double-free");
}

/* ---- item 8: a program that recovers with siglongjmp, or aborts ---- */

static sigjmp_buf recovery_point;
static volatile int recoveries;

/* A memory probe: the first fault is expected and left by siglongjmp;
 * any later one is a real crash, left to the default action. */
static void probe_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    if (recoveries++ == 0)
        siglongjmp(recovery_point, 1);
    signal(signo, SIG_DFL);
}

static void *crash_in_thread(void *unused)
{
    (void)unused;
    write_to_null();
    return NULL;
}

static void recover_by_longjmp_then_crash_in_a_thread(void *context)
{
    (void)context;
    alarm(HANG_BOUND);
    struct sigaction probe;
    memset(&probe, 0, sizeof probe);
    probe.sa_sigaction = probe_handler;
    probe.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &probe, NULL);
    install_or_exit(NULL);
    if (sigsetjmp(recovery_point, 1) == 0)
        write_to_null(); /* the probe: left by siglongjmp */
    pthread_t thread;
    pthread_create(&thread, NULL, crash_in_thread, NULL);
    pthread_join(thread, NULL);
    _exit(3);
}

Test(edges, after_a_siglongjmp_out_of_the_chain_the_next_crash_gets_a_report, .timeout = 30)
{
    static struct child_result result;
    run_child(recover_by_longjmp_then_crash_in_a_thread, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(count_of(result.output, "*** execinfo_ex: fatal signal 11"), 2, "%s",
                 result.output);
    cr_assert_eq(count_of(result.output, "*** end of report"), 2, "%s", result.output);
    assert_in(result.output, "(crash_in_thread+");
}

static void aborting_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)signo;
    (void)info;
    (void)ucontext;
    abort();
}

static void crash_into_an_aborting_handler(void *context)
{
    (void)context;
    alarm(HANG_BOUND);
    struct sigaction aborting;
    memset(&aborting, 0, sizeof aborting);
    aborting.sa_sigaction = aborting_handler;
    aborting.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &aborting, NULL);
    install_or_exit(NULL);
    write_to_null();
}

Test(edges, an_abort_in_the_chained_handler_gets_its_own_report, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_into_an_aborting_handler, NULL, &result);
    assert_died_by(&result, SIGABRT);
    const char *segv = strstr(result.output, "*** execinfo_ex: fatal signal 11 (SIGSEGV)");
    const char *abrt = strstr(result.output, "*** execinfo_ex: fatal signal 6 (SIGABRT)");
    cr_assert(segv != NULL && abrt != NULL && segv < abrt, "%s", result.output);
    cr_assert_eq(count_of(result.output, "*** end of report"), 2, "%s", result.output);
    assert_in(abrt, "(aborting_handler+");
}

/* ---- item 9: called through signal()'s old-handler pointer ---- */

/* HANDLER(SIGNO) with rsi and rdx, x1 and x2 (a SA_SIGINFO handler's siginfo and
 * ucontext) set to GARBAGE: a tail call, so the handler returns to our
 * caller. What a program's handler that calls the pointer signal()
 * returned leaves in those registers is anything at all. */
TEST_ASM_CALL_PLAIN_WITH_GARBAGE

static void (*previous_handler)(int);
static uintptr_t garbage;
static char zeros[4096] __attribute__((aligned(16)));

__attribute__((noinline)) static void programs_own_handler(int signo)
{
    call_plain_with_garbage(previous_handler, signo, garbage);
}

static void programs_own_siginfo_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)info;
    (void)ucontext;
    programs_own_handler(signo);
}

static void crash_with_handler_that_calls_ours_plainly(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(NULL);
    if (context == NULL) {
        garbage = 8; /* unmapped */
        previous_handler = signal(SIGSEGV, programs_own_handler);
    } else {
        garbage = (uintptr_t)zeros; /* readable, and no signal frame */
        struct sigaction own, old;
        memset(&own, 0, sizeof own);
        own.sa_sigaction = programs_own_siginfo_handler;
        own.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &own, &old);
        previous_handler = old.sa_handler;
    }
    write_to_null();
}

Test(edges, called_through_the_pointer_signal_returned_with_unmapped_garbage, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_handler_that_calls_ours_plainly, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    assert_in(out, "*** execinfo_ex: fatal signal 11 (SIGSEGV), code unknown (no siginfo)\n");
    /* The trace is the interrupted one, from the kernel's signal frame. */
    const char *first = strstr(out, "#0  ");
    cr_assert(first != NULL && strstr(first, "(write_to_null+") != NULL &&
              strstr(first, "(write_to_null+") < strchr(first, '\n'), "%s", out);
    assert_in(out, "*** end of report");
}

Test(edges, called_plainly_from_a_siginfo_handler_with_readable_garbage, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_handler_that_calls_ours_plainly, (void *)1, &result);
    assert_died_by(&result, SIGSEGV);
    const char *out = result.output;
    /* That handler's own frame has the kernel's siginfo. */
    assert_in(out, "(SIGSEGV), code 1 (SEGV_MAPERR), fault address 0x10, WRITE of size 4\n");
    const char *first = strstr(out, "#0  ");
    cr_assert(first != NULL && strstr(first, "(write_to_null+") != NULL &&
              strstr(first, "(write_to_null+") < strchr(first, '\n'), "%s", out);
    assert_in(out, "*** end of report");
}

/* The handler checks what it is given with process_vm_readv; where a
 * seccomp filter refuses it (some sandboxes do), the kernel's own call
 * must still give a whole report. Not a test of the old code: of the new
 * code's fallback. */
static void refuse_process_vm_readv(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { sizeof filter / sizeof filter[0], filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
        _exit(97);
}

static void crash_without_process_vm_readv(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(NULL);
    refuse_process_vm_readv();
    if (context != NULL)
        _exit((int)read_through_freed_pointer());
    write_to_null();
}

Test(edges, with_process_vm_readv_refused_the_report_is_still_whole, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_without_process_vm_readv, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    /* The direction is in the ucontext; the size needed the instruction. */
    assert_in(result.output,
              "(SIGSEGV), code 1 (SEGV_MAPERR), fault address 0x10, WRITE of unknown size\n");
    assert_in(result.output, "(write_to_null+0) [");
    assert_in(result.output, "*** end of report");
    /* The instruction cannot be read then: the registers still hint. */
    run_child(crash_without_process_vm_readv, (void *)1, &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "code 128 (SI_KERNEL), fault address unknown\n");
    assert_in(result.output, " holds 0xefefefefefefefef: not canonical, the free-fill pattern 0xef\n");
    assert_in(result.output, "*** end of report");
}

/* ---- items 10 and 11: a report file that stops taking bytes ---- */

#define FILE_LIMIT 700 /* bytes: less than a report */

static void crash_over_the_file_size_limit(void *context)
{
    const char *options = context;
    alarm(HANG_BOUND);
    if (strstr(options, ":ignore_sigxfsz") != NULL)
        signal(SIGXFSZ, SIG_IGN); /* then the write fails with EFBIG, as on a full disk */
    char own[256];
    snprintf(own, sizeof own, "%.*s", (int)(strcspn(options, ":")), options);
    struct rlimit limit = { FILE_LIMIT, FILE_LIMIT };
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        _exit(98);
    install_or_exit(own);
    write_to_null();
}

Test(edges, a_report_past_rlimit_fsize_still_dies_by_the_original_signal, .timeout = 30)
{
    static struct child_result result;
    char path[80], options[160];
    temporary_path(path, sizeof path, "fsize");
    snprintf(options, sizeof options, "report=%s", path);
    run_child(crash_over_the_file_size_limit, options, &result);
    struct stat status;
    cr_assert_eq(stat(path, &status), 0);
    unlink(path);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(status.st_size, FILE_LIMIT);
}

Test(edges, when_the_report_file_fails_the_rest_goes_to_stderr, .timeout = 30)
{
    static struct child_result result;
    static char file_text[1 << 16];
    char path[80], options[160];
    temporary_path(path, sizeof path, "full");
    snprintf(options, sizeof options, "report=%s:ignore_sigxfsz", path);
    run_child(crash_over_the_file_size_limit, options, &result);
    read_file(path, file_text, sizeof file_text);
    unlink(path);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(strlen(file_text), FILE_LIMIT);
    cr_assert(strncmp(file_text, "*** execinfo_ex: fatal signal 11", 32) == 0, "%s", file_text);
    const char *out = result.output;
    assert_in(out, "*** execinfo_ex: writing the report to ");
    assert_in(out, " failed (errno 27); the rest of the report follows\n");
    assert_in(out, "*** end of report\n");
    /* Nothing is lost between the two: the trace is whole across them. */
    cr_assert(strstr(file_text, "(write_to_null+") != NULL || strstr(out, "(write_to_null+") != NULL,
              "file:\n%s\nstderr:\n%s", file_text, out);
    assert_in(out, "(crash_over_the_file_size_limit+");
}
