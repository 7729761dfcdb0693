/* thread_gather.c: list the threads, ask each for its context, wait for
 * the answers within one deadline, and say why of every thread that gave
 * none.
 * World: signal-safe (thread_list, thread_proc, thread_request).
 *
 * Whatever happens, the gathering ends at its deadline: a thread in
 * uninterruptible sleep (a vfork parent), one stopped by a tracer, one
 * that blocks the request signal costs at most the deadline, once for all
 * of them. Those that block it are found early from their status file,
 * so that they do not cost the whole deadline. */
#define _GNU_SOURCE
#include "thread_gather.h"
#include "thread_emulator.h"
#include "thread_list.h"
#include "thread_proc.h"
#include "thread_request.h"
#include "../unwind/capture.h"

#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* When to look for the threads that block the signal, if not all have
 * answered: a thread that can answer has answered well before. */
#define BLOCKED_CHECK_NS (5 * 1000 * 1000)
/* How long an answered thread waits for release beyond the deadline. */
#define PARK_AFTER_DEADLINE_MS 10000

static atomic_int gathering;   /* the gatherer's tid while a gathering is under way, 0: none */

static void set_empty(struct thread_set *set, const struct gather_settings *settings, int error)
{
    memset(set, 0, sizeof *set);
    set->cap = settings->cap;
    set->timeout_ms = settings->timeout_ms;
    set->not_gathered = error;
}

/* Name and state from its stat file; one whose stat is gone, or a main
 * thread gone by pthread_exit (a zombie while the others live on), has
 * exited. */
static void read_stat(struct thread_facts *facts)
{
    if (thread_proc_stat(facts->tid, facts->name, &facts->state) < 0) {
        facts->state = '?';
        facts->outcome = THREAD_EXITED;
    } else if (facts->state == 'Z' || facts->state == 'X') {
        facts->outcome = THREAD_EXITED;
    }
}

/* Before it is asked. A thread that answers says its name and state
 * itself (thread_request.c); one that does not has them read from its
 * stat file after the round, which then still shows what it was doing.
 * Only the main thread is read now: the one thread that can linger as a
 * zombie, which would not answer and would cost the wait for nothing. */
static void describe(struct thread_facts *facts, pid_t tid, pid_t main_tid)
{
    memset(facts, 0, offsetof(struct thread_facts, context));
    facts->tid = tid;
    facts->thread_pointer = 0;
    facts->state = '?';
    facts->outcome = THREAD_NO_ANSWER;
    if (tid == main_tid)
        read_stat(facts);
}

/* Ask every thread still there; returns how many were asked. */
static int ask_all(struct thread_set *set, unsigned char *asked)
{
    int count = 0;
    for (int i = 0; i < set->count; i++) {
        asked[i] = 0;
        if (set->threads[i].outcome == THREAD_EXITED)
            continue;
        int error = thread_request_send(i);
        if (error == 0) {
            asked[i] = 1;
            count++;
        } else {
            set->threads[i].outcome = error == -ESRCH ? THREAD_EXITED : THREAD_NOT_STOPPED;
        }
    }
    return count;
}

/* Threads asked and silent that block the signal (with the request
 * still pending at them), or have gone: no use waiting for them. */
static void drop_hopeless(struct thread_set *set, const unsigned char *asked)
{
    for (int i = 0; i < set->count; i++) {
        struct thread_facts *facts = &set->threads[i];
        if (!asked[i] || thread_request_answered(i) || facts->outcome != THREAD_NO_ANSWER)
            continue;
        int blocks = thread_proc_blocks(facts->tid, THREAD_REQUEST_SIGNAL);
        if (blocks > 0) {
            facts->outcome = THREAD_BLOCKS_SIGNALS;
            facts->blocks_all = blocks == 2;
        } else if (blocks == -ENOENT) {
            facts->outcome = THREAD_EXITED;
        }
    }
}

/* Asked, not given up on, and not answered yet. */
static int awaited(const struct thread_set *set, const unsigned char *asked)
{
    int count = 0;
    for (int i = 0; i < set->count; i++)
        count += asked[i] && set->threads[i].outcome == THREAD_NO_ANSWER &&
                 !thread_request_answered(i);
    return count;
}

/* Wait until every thread still awaited has answered, or the deadline.
 * Not by the answer count alone: a thread given up on may answer all the
 * same (it unblocked the signal meanwhile), and its answer must not stand
 * for one still on its way. */
static void wait_for_the_rest(const struct thread_set *set, const unsigned char *asked,
                              int64_t deadline)
{
    for (;;) {
        int missing = awaited(set, asked);
        if (missing == 0 || thread_request_now() >= deadline)
            return;
        int now = thread_request_wait(0, 0); /* the answers so far */
        thread_request_wait(now + missing, deadline);
    }
}

/* For a thread that gave no answer: where the kernel shows it blocked,
 * its stack pointer and pc, and the walk from them (enough where each
 * caller's frame is found from the stack pointer, as in most code). */
static void read_silent_thread(struct thread_facts *facts, int frames)
{
    if (facts->outcome != THREAD_EXITED && facts->state == '?')
        read_stat(facts);
    if (facts->outcome == THREAD_EXITED)
        return;
    long number;
    uintptr_t sp, pc;
    if (thread_proc_syscall(facts->tid, &number, &sp, &pc) < 0)
        return;
    facts->have_syscall = 1;
    facts->syscall = number;
    facts->syscall_sp = sp;
    facts->syscall_pc = pc;
    if (pc != 0 && sp != 0)
        facts->frame_count = capture_registers_kinds(facts->frames, facts->frame_exact, frames,
                                                     pc, sp);
}

int thread_gather(struct thread_set *set, const struct gather_settings *settings)
{
    int64_t deadline = thread_request_now() + (int64_t)settings->timeout_ms * 1000000;
    int expected = 0;
    int self = gettid(), idle = 0;
    if (!atomic_compare_exchange_strong(&gathering, &idle, self)) {
        set_empty(set, settings, -EBUSY);
        return -EBUSY;
    }
    set_empty(set, settings, 0);
    int others = settings->cap - 1;
    if (others > THREADS_CAP_MAX)
        others = THREADS_CAP_MAX;
    pid_t *tids;
    int error = thread_request_prepare(others, settings->frames,
                                       settings->timeout_ms + PARK_AFTER_DEADLINE_MS,
                                       &set->threads, &tids);
    if (error < 0) {
        set->not_gathered = error;
        return error;
    }
    int count = thread_list_tids(tids, others, gettid(), &set->seen);
    if (count < 0) {
        set->not_gathered = count;
        return count;
    }
    /* Before the cap's count: qemu-user's threads are not the program's
     * and are neither asked nor counted (thread_emulator.c). */
    int listed = count;
    count = thread_emulator_leave_out(tids, count);
    set->emulator_threads = listed - count;
    set->seen -= set->emulator_threads;
    set->count = count;
    set->left_out = set->seen - 1 - count > 0 ? set->seen - 1 - count : 0;
    static unsigned char asked[THREADS_CAP_MAX]; /* one gatherer at a time */
    thread_request_populate(count);
    pid_t main_tid = getpid();
    for (int i = 0; i < count; i++)
        describe(&set->threads[i], tids[i], main_tid);
    thread_request_read_mappings();
    /* The threads of the last gathering still on their way out of its
     * handler, where the request signal is blocked: not hopeless. */
    thread_request_wait_departures(deadline);
    thread_request_open_round();
    expected = ask_all(set, asked);
    int64_t early = thread_request_now() + BLOCKED_CHECK_NS;
    int answered = thread_request_wait(expected, early < deadline ? early : deadline);
    if (answered < expected) {
        if (!settings->patient)
            drop_hopeless(set, asked);
        wait_for_the_rest(set, asked, deadline);
        if (settings->patient)
            drop_hopeless(set, asked); /* why they never answered */
    }
    thread_request_close_round();
    answered = 0;
    for (int i = 0; i < count; i++) {
        if (asked[i] && thread_request_answered(i)) {
            set->threads[i].outcome = THREAD_READ;
            answered++;
        } else {
            read_silent_thread(&set->threads[i], settings->frames);
        }
    }
    /* Nothing stopped: nothing to hold until the release. A vfork child
     * lists only itself, and its memory is its parent's: the crash of one
     * keeps "its threads stopped" until it dies, never releasing, which
     * would leave this gathering under way for the parent for good. */
    if (count == 0) {
        thread_request_release();
        atomic_store(&gathering, 0);
    }
    return answered;
}

void thread_gather_release(struct thread_set *set)
{
    if (set->not_gathered == -EBUSY || atomic_load(&gathering) != gettid())
        return; /* not ours to release, or released already (nothing stopped) */
    thread_request_release();
    atomic_store(&gathering, 0);
}
