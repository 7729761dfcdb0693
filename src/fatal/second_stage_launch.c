/* second_stage_launch.c: start a program from a signal handler and talk
 * to it over pipes within a deadline (second_stage_launch.h).
 * World: signal-safe (raw syscalls through syscall(): clone, execve,
 * dup3, fcntl, ppoll, kill, wait4; pipe2, sigprocmask).
 *
 * Not glibc's fork(): it runs the program's atfork handlers and takes
 * malloc's locks, which the crashed thread may hold. A raw clone with
 * SIGCHLD and no stack is a fork without any of that; the child only
 * moves descriptors and calls execve. SIGCHLD and SIGPIPE are blocked
 * while the child lives (our child's end must not run the program's
 * SIGCHLD handler, a symbolizer that went away must cost EPIPE, not the
 * process), and the ones we caused are consumed before the mask is
 * restored. The child is always killed (if still there) and reaped: no
 * zombie is left to a program that goes on after a dump. One that
 * answered whole may be reaped after the report instead (its index cache
 * store then costs the report nothing), within the same deadline. */
#define _GNU_SOURCE
#include "second_stage_launch.h"
#include "../base/load_touched.h"
#include "../base/signal_consume.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { REQUEST_READ, REQUEST_WRITE, ANSWER_READ, ANSWER_WRITE, STATUS_READ, STATUS_WRITE,
       PIPE_ENDS };

static int64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_all(int fds[PIPE_ENDS])
{
    for (int i = 0; i < PIPE_ENDS; i++)
        close_fd(&fds[i]);
}

/* FD moved above 0..2, so that the child's dup3 onto them cannot
 * overwrite another end (a process started with stdin closed). */
static int above_stdio(int fd)
{
    if (fd > 2)
        return fd;
    int moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return moved;
}

static int open_pipes(int fds[PIPE_ENDS])
{
    for (int i = 0; i < PIPE_ENDS; i++)
        fds[i] = -1;
    for (int i = 0; i < PIPE_ENDS; i += 2) {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) < 0)
            return -errno;
        fds[i] = above_stdio(ends[0]);
        fds[i + 1] = above_stdio(ends[1]);
        if (fds[i] < 0 || fds[i + 1] < 0)
            return -EMFILE;
    }
    /* Written as the child reads: never blocks on a full pipe. */
    if (syscall(SYS_fcntl, fds[REQUEST_WRITE], F_SETFL, O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

/* The symbolizer's environment, copied at install (environ is the
 * normal world's: setenv may free what it points to). */
#define ENVIRONMENT_MAX 8
static LOAD_TOUCHED size_t environment_used;
static LOAD_TOUCHED char *environment[ENVIRONMENT_MAX + 1];
static LOAD_TOUCHED int environment_count;
/* In .bss: in .data its 4 KiB spread the variables above over one page
 * more, where its head shares a page of .bss with what the install
 * writes there (issue 26: two faults fewer). */
static char environment_text[STAGE_ENVIRONMENT_BYTES];

void stage_environment_clear(void)
{
    environment_used = 0;
    environment_count = 0;
    environment[0] = NULL;
}

void stage_environment_add(const char *name, const char *value)
{
    size_t name_length = strlen(name), value_length = strlen(value);
    size_t need = name_length + 1 + value_length + 1;
    if (environment_count == ENVIRONMENT_MAX || need > sizeof environment_text - environment_used)
        return;
    char *entry = environment_text + environment_used;
    memcpy(entry, name, name_length);
    entry[name_length] = '=';
    memcpy(entry + name_length + 1, value, value_length + 1);
    environment_used += need;
    environment[environment_count++] = entry;
    environment[environment_count] = NULL;
}

/* In the child: stdin, stdout, stderr, mask, then the program. */
static _Noreturn void become_program(const char *program, const int fds[PIPE_ENDS])
{
    sigset_t none;
    sigemptyset(&none);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, (size_t)(_NSIG / 8));
    int error = 0;
    if (syscall(SYS_dup3, fds[REQUEST_READ], 0, 0) < 0 ||
        syscall(SYS_dup3, fds[ANSWER_WRITE], 1, 0) < 0)
        error = errno;
    int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0)
        syscall(SYS_dup3, null, 2, 0);
    /* The program's own descriptors stay with it (a pipe's write end
     * held by the symbolizer would keep its reader waiting); a kernel
     * before 5.11 leaves them to the symbolizer, which ends soon. */
    syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC);
    if (error == 0) {
        char *argv[] = { (char *)program, NULL };
        syscall(SYS_execve, program, argv, environment);
        error = errno;
    }
    write(fds[STATUS_WRITE], &error, sizeof error);
    _exit(127);
}

struct exchange_state {
    struct stage_exchange *exchange;
    int fds[PIPE_ENDS];
    size_t sent;
    int exec_error;       /* from the status pipe */
    int answer_ended;     /* EOF on stdout, or "end" read */
};

static void send_more(struct exchange_state *state)
{
    struct stage_exchange *exchange = state->exchange;
    long written = syscall(SYS_write, state->fds[REQUEST_WRITE], exchange->request + state->sent,
                           exchange->request_length - state->sent);
    if (written > 0)
        state->sent += (size_t)written;
    if ((written < 0 && errno != EAGAIN && errno != EINTR) ||
        state->sent == exchange->request_length)
        close_fd(&state->fds[REQUEST_WRITE]); /* all sent, or no reader: EOF for it */
}

static void read_status(struct exchange_state *state)
{
    int error = 0;
    long got = syscall(SYS_read, state->fds[STATUS_READ], &error, sizeof error);
    if (got < 0 && errno == EINTR)
        return;
    if (got == (long)sizeof error)
        state->exec_error = error != 0 ? error : EIO;
    close_fd(&state->fds[STATUS_READ]); /* EOF: execve closed it, the program runs */
}

static int answer_complete(const struct stage_exchange *exchange)
{
    static const char last[] = "\nend\n";
    size_t n = sizeof last - 1;
    return exchange->answer_length >= n &&
           memcmp(exchange->answer + exchange->answer_length - n, last, n) == 0;
}

static void read_answer(struct exchange_state *state)
{
    struct stage_exchange *exchange = state->exchange;
    size_t room = exchange->answer_capacity - exchange->answer_length;
    long got = room > 0 ? syscall(SYS_read, state->fds[ANSWER_READ],
                                  exchange->answer + exchange->answer_length, room)
                        : 0;
    if (got < 0 && errno == EINTR)
        return;
    if (got > 0)
        exchange->answer_length += (size_t)got;
    if (got <= 0 || answer_complete(exchange))
        state->answer_ended = 1; /* EOF, an error, or a full buffer: what came is kept */
}

/* Poll the open ends until the answer ended or DEADLINE. Returns 0, or
 * -ETIMEDOUT. */
static int exchange_until(struct exchange_state *state, int64_t deadline)
{
    while (!state->answer_ended && state->exec_error == 0) {
        struct pollfd polls[3];
        void (*act[3])(struct exchange_state *);
        nfds_t count = 0;
        int ends[3] = { REQUEST_WRITE, ANSWER_READ, STATUS_READ };
        short events[3] = { POLLOUT, POLLIN, POLLIN };
        void (*actions[3])(struct exchange_state *) = { send_more, read_answer, read_status };
        for (int i = 0; i < 3; i++)
            if (state->fds[ends[i]] >= 0) {
                polls[count] = (struct pollfd){ state->fds[ends[i]], events[i], 0 };
                act[count++] = actions[i];
            }
        int64_t left = deadline - now_ns();
        if (left <= 0)
            return -ETIMEDOUT;
        struct timespec timeout = { left / 1000000000, left % 1000000000 };
        long ready = syscall(SYS_ppoll, polls, count, &timeout, NULL, (size_t)(_NSIG / 8));
        if (ready < 0 && errno != EINTR)
            return -ETIMEDOUT; /* cannot wait: as if it never answered */
        for (nfds_t i = 0; ready > 0 && i < count; i++)
            if (polls[i].revents != 0)
                act[i](state);
    }
    return 0;
}

/* The child's end: given until DEADLINE to exit by itself when it should
 * (it answered, or it failed), then killed. *STATUS -1 when someone else
 * reaped it (SIGCHLD ignored). */
static void reap(pid_t pid, int64_t deadline, int *status)
{
    /* Short steps: after its answer the child exits within microseconds
     * (a step of 1 ms cost the crash about 1 ms, part 7). */
    struct timespec step = { 0, 50000 };
    for (;;) {
        long done = syscall(SYS_wait4, pid, status, WNOHANG | __WALL, NULL);
        if (done == pid)
            return;
        if (done < 0 && errno != EINTR) {
            *status = -1;
            return;
        }
        if (now_ns() >= deadline)
            break;
        nanosleep(&step, NULL);
    }
    syscall(SYS_kill, pid, SIGKILL);
    while (syscall(SYS_wait4, pid, status, __WALL, NULL) < 0)
        if (errno != EINTR) {
            *status = -1;
            return;
        }
}

static int pending(int signo)
{
    sigset_t set;
    sigemptyset(&set);
    syscall(SYS_rt_sigpending, &set, (size_t)(_NSIG / 8));
    return sigismember(&set, signo);
}

/* Whether the child can be left to end after the report: it answered
 * whole, and the caller takes it. */
static int may_leave(const struct exchange_state *state, int timed_out)
{
    return state->exchange->leave != NULL && !timed_out && state->exec_error == 0 &&
           answer_complete(state->exchange);
}

static enum second_stage_outcome talk(struct exchange_state *state, pid_t pid)
{
    struct stage_exchange *exchange = state->exchange;
    int64_t deadline = now_ns() + (int64_t)exchange->timeout_ms * 1000000;
    close_fd(&state->fds[REQUEST_READ]);
    close_fd(&state->fds[ANSWER_WRITE]);
    close_fd(&state->fds[STATUS_WRITE]);
    int timed_out = exchange_until(state, deadline) < 0;
    /* After its answer the symbolizer stores what it read in the index
     * cache, within the same deadline: where the caller allows, it does
     * so while the report is written (stage_exchange_reap after it). */
    if (may_leave(state, timed_out)) {
        exchange->leave->pid = pid;
        exchange->leave->deadline_ns = deadline;
    } else {
        reap(pid, timed_out ? 0 : deadline, &exchange->wait_status);
    }
    close_all(state->fds);
    if (state->exec_error != 0) {
        exchange->error = state->exec_error;
        return SECOND_STAGE_EXEC_FAILED;
    }
    return timed_out ? SECOND_STAGE_TIMED_OUT : SECOND_STAGE_ANSWERED;
}

/* The end of the quiet time: the signals our child caused consumed (not
 * one that was pending before), the mask restored. */
static void unquiet(int signo, int was_pending, const sigset_t *previous)
{
    if (!was_pending && !sigismember(previous, signo))
        signal_consume(signo);
}

void stage_exchange_reap(struct stage_child *child, int *wait_status)
{
    if (child->pid <= 0)
        return;
    reap((pid_t)child->pid, child->deadline_ns, wait_status);
    child->pid = 0;
    unquiet(SIGCHLD, child->child_pending, &child->previous_mask);
    sigprocmask(SIG_SETMASK, &child->previous_mask, NULL);
}

enum second_stage_outcome stage_exchange_run(struct stage_exchange *exchange)
{
    struct exchange_state state = { exchange, { 0 }, 0, 0, 0 };
    sigset_t quiet, previous;
    exchange->answer_length = 0;
    exchange->error = 0;
    exchange->wait_status = -1;
    if (exchange->leave != NULL)
        exchange->leave->pid = 0;
    int result = open_pipes(state.fds);
    if (result < 0) {
        close_all(state.fds);
        exchange->error = -result;
        return SECOND_STAGE_PIPE_FAILED;
    }
    sigemptyset(&quiet);
    sigaddset(&quiet, SIGCHLD);
    sigaddset(&quiet, SIGPIPE);
    sigprocmask(SIG_BLOCK, &quiet, &previous);
    int child_pending = pending(SIGCHLD), pipe_pending = pending(SIGPIPE);
    enum second_stage_outcome outcome;
    long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (pid == 0)
        become_program(exchange->program, state.fds);
    if (pid < 0) {
        exchange->error = errno;
        close_all(state.fds);
        outcome = SECOND_STAGE_START_FAILED;
    } else {
        outcome = talk(&state, (pid_t)pid);
    }
    unquiet(SIGPIPE, pipe_pending, &previous);
    if (exchange->leave != NULL && exchange->leave->pid > 0) {
        /* SIGCHLD stays blocked until the child left is reaped. */
        exchange->leave->previous_mask = previous;
        exchange->leave->child_pending = child_pending;
        sigset_t still = previous;
        sigaddset(&still, SIGCHLD);
        sigprocmask(SIG_SETMASK, &still, NULL);
        return outcome;
    }
    unquiet(SIGCHLD, child_pending, &previous);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return outcome;
}
