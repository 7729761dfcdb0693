/* print_trace, backtrace_print_fd, backtrace_ucontext and backtrace_resolve:
 * names and source lines, checked against __LINE__. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "support.h"

static int print_line;

__attribute__((noinline)) static void print_from_static(int fd)
{
    print_line = __LINE__ + 1;
    print_trace_fd(fd);
    __asm__ volatile("" ::: "memory");
}

static void write_trace(int fd, void *context)
{
    (void)context;
    print_from_static(fd);
}

Test(print_trace, header_then_frames_with_file_and_line)
{
    char *text = capture_output(write_trace, NULL);
    int frames = 0;
    cr_assert_eq(sscanf(text, "Obtained %d stack frames.\n", &frames), 1, "%s", text);
    cr_assert_eq(count_lines(text), frames + 1, "%s", text);
    char *first = strchr(text, '\n') + 1;
    cr_assert(strncmp(strstr(first, "(") + 1, "print_from_static+0x", 20) == 0, "%s", first);
    char expected[64];
    snprintf(expected, sizeof expected, "test_print_trace.c:%d\n", print_line);
    cr_assert(strstr(first, expected) != NULL, "want %s in\n%s", expected, text);
    free(text);
}

static int fault_line;
static int handler_pipe[2];

__attribute__((noinline)) static void fault_in_static(volatile int *pointer)
{
    fault_line = __LINE__ + 1;
    *pointer = 7;
}

static void on_segv(int signo, siginfo_t *info, void *ucontext)
{
    void *frames[64];
    (void)signo;
    (void)info;
    int count = backtrace_ucontext(frames, 64, ucontext);
    backtrace_print_fd(frames, count, BACKTRACE_FIRST_IS_PC, handler_pipe[1]);
    _exit(count > 0 ? 0 : 1);
}

static void crash_into_handler(int fd, void *context)
{
    static int harmless;
    (void)context;
    fault_in_static(&harmless); /* sets fault_line in this process too */
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_segv;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, NULL);
        handler_pipe[1] = fd;
        fault_in_static((volatile int *)8);
        _exit(3);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

Test(backtrace_ucontext, first_frame_is_the_faulting_instruction, .timeout = 20)
{
    char *text = capture_output(crash_into_handler, NULL);
    /* No handler frame, no trampoline: the fault itself comes first. */
    cr_assert(strstr(text, "(fault_in_static+0x") != NULL, "%s", text);
    cr_assert(strstr(text, "(fault_in_static+0x") < strchr(text, '\n'), "%s", text);
    cr_assert_eq(strstr(text, "on_segv"), NULL, "%s", text);
    cr_assert_eq(strstr(text, "__restore_rt"), NULL, "%s", text);
    char expected[64];
    snprintf(expected, sizeof expected, "test_print_trace.c:%d\n", fault_line);
    cr_assert(strstr(text, expected) != NULL && strstr(text, expected) < strchr(text, '\n'),
              "want %s first in\n%s", expected, text);
    free(text);
}

Test(backtrace_ucontext, bad_arguments_store_nothing)
{
    void *frames[4];
    ucontext_t context;
    cr_assert_eq(backtrace_ucontext(frames, 4, NULL), 0);
    cr_assert_eq(backtrace_ucontext(frames, 0, &context), 0);
    cr_assert_eq(backtrace_ucontext(NULL, 4, &context), 0);
}

/* ---- backtrace_resolve ---- */

static int inner_line, outer_line;
static void *resolved_frames[32];
static int resolved_count;

static inline __attribute__((always_inline)) void inlined_capture(void)
{
    inner_line = __LINE__ + 1;
    resolved_count = backtrace(resolved_frames, 32);
}

__attribute__((noinline)) static void calls_inlined(void)
{
    outer_line = __LINE__ + 1;
    inlined_capture();
    __asm__ volatile("" ::: "memory");
}

Test(backtrace_resolve, gives_inlined_frames_with_lines)
{
    struct backtrace_frame *frames = NULL;
    calls_inlined();
    int count = backtrace_resolve(resolved_frames, resolved_count, 0, &frames);
    cr_assert_gt(count, resolved_count, "no inlined frame: %d for %d", count, resolved_count);
    cr_assert_not_null(frames);
    /* Address 0 sits in calls_inlined, where inlined_capture was inlined. */
    cr_assert_eq(frames[0].index, 0);
    cr_assert_eq(frames[0].inlined, 1);
    cr_assert_str_eq(frames[0].function, "inlined_capture");
    cr_assert_eq(frames[0].line, (unsigned)inner_line);
    cr_assert_eq(frames[1].index, 0);
    cr_assert_eq(frames[1].inlined, 0);
    cr_assert_str_eq(frames[1].function, "calls_inlined");
    cr_assert_eq(frames[1].line, (unsigned)outer_line);
    cr_assert(strstr(frames[1].file, "test_print_trace.c") != NULL, "%s", frames[1].file);
    cr_assert(strstr(frames[1].module, "boxfort") || strstr(frames[1].module, "test_print_trace"),
              "%s", frames[1].module);
    cr_assert_eq(frames[1].offset,
                 (unsigned long)((uintptr_t)resolved_frames[0] - (uintptr_t)calls_inlined));
    free(frames);
}

Test(backtrace_resolve, covers_every_address_and_libc)
{
    void *buffer[3] = { NULL, (void *)1, (void *)printf };
    struct backtrace_frame *frames = NULL;
    int count = backtrace_resolve(buffer, 3, BACKTRACE_FIRST_IS_PC, &frames);
    cr_assert_eq(count, 3);
    cr_assert_null(frames[0].module);
    cr_assert_null(frames[1].function);
    cr_assert_eq(frames[2].index, 2);
    cr_assert(strstr(frames[2].module, "libc.so.6") != NULL);
    cr_assert_not_null(frames[2].function);
    free(frames);
}

Test(backtrace_resolve, rejects_bad_arguments)
{
    struct backtrace_frame *frames = (struct backtrace_frame *)1;
    void *buffer[1] = { NULL };
    errno = 0;
    cr_assert_eq(backtrace_resolve(buffer, -1, 0, &frames), -1);
    cr_assert_eq(errno, EINVAL);
    cr_assert_null(frames);
    cr_assert_eq(backtrace_resolve(buffer, 1, 0, NULL), -1);
    cr_assert_eq(backtrace_resolve(NULL, 2, 0, &frames), -1);
    cr_assert_eq(backtrace_resolve(buffer, 0, 0, &frames), 0);
    free(frames);
}

/* ---- backtrace_print_fd(BACKTRACE_JSON) ---- */

static void *json_frames[16];
static int json_count, json_line;

__attribute__((noinline)) static void capture_for_json(void)
{
    json_line = __LINE__ + 1;
    json_count = backtrace(json_frames, 16);
    __asm__ volatile("" ::: "memory");
}

static void write_json(int fd, void *context)
{
    backtrace_print_fd(json_frames, *(int *)context, BACKTRACE_JSON, fd);
}

Test(backtrace_print_fd, json_is_one_array_of_frame_objects)
{
    capture_for_json();
    cr_assert_gt(json_count, 2);
    char *text = capture_output(write_json, &json_count);
    cr_assert(strncmp(text, "[{\"address\":\"0x", 15) == 0, "%s", text);
    cr_assert_eq(text[strlen(text) - 1], ']', "%s", text);
    cr_assert_eq(count_of(text, "{\"address\":"), json_count, "%s", text);
    cr_assert(strstr(text, "\"function\":\"capture_for_json\""), "%s", text);
    char line[64];
    snprintf(line, sizeof line, "\"line\":%d}", json_line);
    cr_assert(strstr(text, line), "want %s in %s", line, text);
    free(text);
    /* Through python's parser, so that it is JSON and not only looks it. */
    int pipes[2];
    cr_assert_eq(pipe(pipes), 0);
    backtrace_print_fd(json_frames, json_count, BACKTRACE_JSON, pipes[1]);
    close(pipes[1]);
    pid_t child = fork();
    if (child == 0) {
        dup2(pipes[0], 0);
        int quiet = open("/dev/null", O_WRONLY);
        dup2(quiet, 1);
        execlp("python3", "python3", "-c", "import json,sys; sys.exit(0 if json.load(sys.stdin) else 1)",
               (char *)NULL);
        _exit(127);
    }
    close(pipes[0]);
    int status;
    waitpid(child, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x", status);
    int none = 0;
    text = capture_output(write_json, &none);
    cr_assert_str_eq(text, "[]");
    free(text);
}
