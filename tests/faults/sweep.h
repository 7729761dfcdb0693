/* sweep.h: run one operation under every allocation failure, each trial in
 * a forked child with a time bound, and tally the outcomes.
 *
 * A trial function runs in the child. With FAIL_AT 0 it is the reference
 * run: nothing fails, and it reports (sweep_reference) how many
 * allocations the operation made, how the live block count moved over the
 * whole trial, and the operation's result as text. With FAIL_AT N it makes
 * the Nth allocation fail and returns an outcome, comparing with the
 * reference (sweep_expected). Messages go to stderr, which the parent
 * collects and prints for the outcomes that are failures. */
#ifndef EXECINFO_EX_SWEEP_H
#define EXECINFO_EX_SWEEP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "execinfo_ex.h"
#include "fault_core.h"

enum outcome {
    OUTCOME_FAILED_CLEANLY = 40, /* the documented error, nothing leaked */
    OUTCOME_SAME = 41,           /* the failure was absorbed: the same result */
    OUTCOME_DEGRADED = 42,       /* success with less in it; the next call is whole */
    OUTCOME_NOT_FIRED = 43,      /* fewer allocations than the reference made */
    OUTCOME_REFERENCE = 44,
    OUTCOME_WRONG_ERROR = 50,
    OUTCOME_LEAK = 51,
    OUTCOME_WRONG_RESULT = 52,   /* success with a result that is not the reference */
    OUTCOME_NO_RECOVERY = 53,    /* the next call, with memory, is still not whole */
    OUTCOME_SETUP = 54,
};

struct sweep_reference {
    long count;   /* allocations made by the operation */
    long delta;   /* live blocks after the trial less before */
    long maps;    /* live mappings after the trial less before */
    char *text;   /* the operation's result, for comparison */
};

struct sweep_tally {
    long points, swept, cleanly, same, degraded, not_fired;
    long wrong_error, leaks, wrong_result, no_recovery, crashes, hangs, exits, setup;
    long in_libdw;   /* bad outcomes of libdw's own failure handling (see below) */
};

/* Set in the parent before each fork: what the reference run reported. */
static struct sweep_reference sweep_expected;

/* Printf to stderr without malloc (a stack buffer and write). */
__attribute__((format(printf, 1, 2))) static void sweep_note(const char *format, ...)
{
    char text[2048];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    if (length > (int)sizeof text - 1)
        length = (int)sizeof text - 1;
    if (length > 0 && write(2, text, (size_t)length) < 0)
        _exit(OUTCOME_SETUP);
}

/* In the reference child: hand the reference to the parent (fd 3). */
static void sweep_reference_report(long count, long delta, long maps, const char *text)
{
    char head[96];
    int length = snprintf(head, sizeof head, "%ld %ld %ld\n", count, delta, maps);
    size_t text_length = text ? strlen(text) : 0;
    if (write(3, head, (size_t)length) != length ||
        (text_length > 0 && write(3, text, text_length) != (ssize_t)text_length))
        _exit(OUTCOME_SETUP);
}

static size_t sweep_read_all(int fd, char **text)
{
    size_t used = 0, capacity = 4096;
    char *buffer = malloc(capacity);
    for (;;) {
        if (used + 1 >= capacity)
            buffer = realloc(buffer, capacity *= 2);
        ssize_t got = read(fd, buffer + used, capacity - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    buffer[used] = '\0';
    *text = buffer;
    return used;
}

typedef int sweep_trial(long fail_at);

/* In the child: where a crash happened, as "fault: crashed in MODULE+0xOFF"
 * for the first frame outside libc (abort and assert are libc's). */
static void sweep_on_crash(int signo, siginfo_t *info, void *ucontext)
{
    void *trace[32];
    (void)info;
    int count = backtrace_ucontext(trace, 32, ucontext);
    for (int i = 0; i < count; i++) {
        struct dl_find_object object;
        void *pc = i == 0 ? trace[i] : (char *)trace[i] - 1;
        if (_dl_find_object(pc, &object) == 0 && object.dlfo_link_map != NULL &&
            strstr(object.dlfo_link_map->l_name, "/libc.so") != NULL)
            continue;
        fault_note_where("crashed in", pc);
        break;
    }
    signal(signo, SIG_DFL);
    raise(signo);
}

static void sweep_catch_crashes(void)
{
    static char stack[1 << 16];
    stack_t alternate = { .ss_sp = stack, .ss_size = sizeof stack };
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = sweep_on_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaltstack(&alternate, NULL);
    int signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        sigaction(signals[i], &action, NULL);
}

/* A bad outcome that is libdw's own (elfutils 0.188): the allocation that
 * failed was made by libdw.so itself, and then libdw crashed (the first
 * frame outside libc is in libdw), asserted, exited through its
 * out-of-memory handler ("libdw: Cannot allocate memory"), lost a block,
 * or swallowed the failure, so that a result lacks what it would have
 * read (a module's lines: docs/DECISIONS.md, "Memory runs out while the
 * index is built", says why it is not seen; execinfo_ex_leaks, point 5788
 * of 54093 with the checkout at /check/work/main: libc's lines, at
 * libdw.so.1+0x31d0d, as before issue 26's changes). These are counted
 * and shown, apart; every other bad outcome is a failure of the sweep. */
static int sweep_libdw_own(int status, const char *messages)
{
    const char *failed = strstr(messages, "fault: failed the allocation of ");
    const char *end = failed ? strchr(failed, '\n') : NULL;
    if (failed == NULL || end == NULL || memmem(failed, (size_t)(end - failed), "/libdw.so", 9) == NULL)
        return 0;
    if (WIFSIGNALED(status)) {
        const char *crash = strstr(messages, "fault: crashed in ");
        const char *crash_end = crash ? strchr(crash, '\n') : NULL;
        return WTERMSIG(status) != SIGALRM && crash_end != NULL &&
               memmem(crash, (size_t)(crash_end - crash), "/libdw.so", 9) != NULL;
    }
    if (WEXITSTATUS(status) == 1)
        return strstr(messages, "libdw: Cannot allocate memory") != NULL;
    return WEXITSTATUS(status) == OUTCOME_LEAK || WEXITSTATUS(status) == OUTCOME_WRONG_RESULT;
}

struct child_run {
    int status;
    char *messages;    /* stderr of the child */
    char *channel;     /* fd 3 of the child */
};

/* Run TRIAL(FAIL_AT) in a child bounded by SECONDS. */
static void sweep_run_child(sweep_trial *trial, long fail_at, unsigned seconds,
                            struct child_run *run)
{
    int messages[2], channel[2];
    if (pipe(messages) != 0 || pipe(channel) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        exit(2);
    }
    if (child == 0) {
        close(messages[0]);
        close(channel[0]);
        dup2(messages[1], 2);
        dup2(channel[1], 3);
        if (messages[1] != 2 && messages[1] != 3)
            close(messages[1]);
        if (channel[1] != 3)
            close(channel[1]);
        alarm(seconds); /* SIGALRM's default action ends a hung trial */
        sweep_catch_crashes();
        _exit(trial(fail_at));
    }
    close(messages[1]);
    close(channel[1]);
    /* Both pipes: the channel is small, read the messages after it. */
    sweep_read_all(channel[0], &run->channel);
    sweep_read_all(messages[0], &run->messages);
    close(messages[0]);
    close(channel[0]);
    while (waitpid(child, &run->status, 0) < 0 && errno == EINTR)
        ;
}

static double sweep_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static const char *outcome_name(int status)
{
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? "hang (time bound)" : strsignal(WTERMSIG(status));
    switch (WEXITSTATUS(status)) {
    case OUTCOME_WRONG_ERROR: return "wrong error";
    case OUTCOME_LEAK: return "leak";
    case OUTCOME_WRONG_RESULT: return "wrong result";
    case OUTCOME_NO_RECOVERY: return "no recovery";
    case OUTCOME_SETUP: return "setup failed";
    case OUTCOME_NOT_FIRED: return "not fired";
    default: return "exited";
    }
}

/* Sweep TRIAL: the reference, then N = 1..count (every STRIDE-th point when
 * the whole sweep would take more than BUDGET seconds, said in the output).
 * DEGRADED_OK: a degraded success is no failure. Returns the tally. */
static struct sweep_tally sweep_operation(const char *name, sweep_trial *trial, double budget,
                                          int degraded_ok, int *failed)
{
    struct sweep_tally tally;
    struct child_run run;
    int printed = 0;

    memset(&tally, 0, sizeof tally);
    double reference_start = sweep_now();
    sweep_run_child(trial, 0, 60, &run);
    double reference_seconds = sweep_now() - reference_start;
    if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != OUTCOME_REFERENCE ||
        sscanf(run.channel, "%ld %ld %ld", &sweep_expected.count, &sweep_expected.delta,
               &sweep_expected.maps) != 3) {
        printf("%s: the reference run failed (%s, status 0x%x):\n%s\n", name,
               outcome_name(run.status), run.status, run.messages);
        *failed = 1;
        free(run.messages);
        free(run.channel);
        return tally;
    }
    char *text = strchr(run.channel, '\n');
    free(sweep_expected.text);
    sweep_expected.text = strdup(text ? text + 1 : "");
    free(run.channel);
    free(run.messages);

    tally.points = sweep_expected.count;
    double start = sweep_now();
    long stride = 1, first = 1;
    /* A trial costs at most about the reference run: when all of them
     * would not fit in BUDGET, the first SWEEP_ALL_FIRST points are swept
     * and then every STRIDE-th. */
    enum { SWEEP_ALL_FIRST = 64 };
    double whole = reference_seconds * (double)tally.points;
    if (whole > budget && tally.points > SWEEP_ALL_FIRST) {
        stride = (long)(whole / budget) + 1;
        printf("  %s: %ld points at up to %.1f ms each exceed the %.0f s budget: points 1-%d, "
               "then every %ld-th\n", name, tally.points, reference_seconds * 1e3, budget,
               SWEEP_ALL_FIRST, stride);
    }
    const char *only = getenv("FAULT_POINT"); /* to look at one trial */
    if (only != NULL) {
        first = atol(only);
        if (first < tally.points)
            tally.points = first;
        if (getenv("FAULT_NOFORK") != NULL) /* under a debugger */
            exit(trial(first));
    }
    for (long n = first; n <= tally.points; n += n < SWEEP_ALL_FIRST ? 1 : stride) {
        sweep_run_child(trial, n, 30, &run);
        tally.swept++;
        int status = run.status, bad = 0;
        if (WIFSIGNALED(status)) {
            if (WTERMSIG(status) == SIGALRM)
                tally.hangs++;
            else
                tally.crashes++;
            bad = 1;
        } else {
            switch (WEXITSTATUS(status)) {
            case OUTCOME_FAILED_CLEANLY: tally.cleanly++; break;
            case OUTCOME_SAME: tally.same++; break;
            case OUTCOME_DEGRADED: tally.degraded++; bad = !degraded_ok; break;
            case OUTCOME_NOT_FIRED: tally.not_fired++; bad = 1; break;
            case OUTCOME_WRONG_ERROR: tally.wrong_error++; bad = 1; break;
            case OUTCOME_LEAK: tally.leaks++; bad = 1; break;
            case OUTCOME_WRONG_RESULT: tally.wrong_result++; bad = 1; break;
            case OUTCOME_NO_RECOVERY: tally.no_recovery++; bad = 1; break;
            case OUTCOME_SETUP: tally.setup++; bad = 1; break;
            default: tally.exits++; bad = 1; break;
            }
        }
        if (bad && sweep_libdw_own(status, run.messages)) {
            bad = 0;
            tally.in_libdw++;
            /* Not a failure: undo its count above. */
            if (WIFSIGNALED(status))
                tally.crashes--;
            else if (WEXITSTATUS(status) == OUTCOME_LEAK)
                tally.leaks--;
            else
                tally.exits--;
            if (tally.in_libdw <= 2)
                printf("  %s: allocation %ld of %ld: libdw's own (%s), not counted:\n%s", name, n,
                       tally.points, outcome_name(status), run.messages);
        }
        if (bad) {
            *failed = 1;
            /* The first few, and the first crash, hang or exit. */
            int rare = WIFSIGNALED(status) || WEXITSTATUS(status) < OUTCOME_FAILED_CLEANLY;
            if (printed++ < 6 || (rare && tally.crashes + tally.hangs + tally.exits == 1))
                printf("  %s: allocation %ld of %ld: %s (status 0x%x)\n%s", name, n, tally.points,
                       outcome_name(status), status, run.messages);
        }
        free(run.messages);
        free(run.channel);
    }
    long failures = tally.wrong_error + tally.leaks + tally.wrong_result + tally.no_recovery +
                    tally.not_fired + tally.setup + (degraded_ok ? 0 : tally.degraded);
    printf("%s: %ld allocation points, %ld swept (%.1f s): %ld failed cleanly, %ld absorbed "
           "(same result), %ld degraded%s; %ld wrong results or errors, %ld leaks, "
           "%ld crashes, %ld hangs, %ld exits",
           name, tally.points, tally.swept, sweep_now() - start, tally.cleanly, tally.same,
           tally.degraded, degraded_ok ? " (allowed, whole on the next call)" : "",
           failures - tally.leaks, tally.leaks, tally.crashes, tally.hangs, tally.exits);
    if (tally.in_libdw > 0)
        printf("; %ld in libdw's own failure handling (elfutils, not counted)", tally.in_libdw);
    printf("\n");
    fflush(stdout);
    return tally;
}

#endif
