/* thread_request.h: ask other threads of the process for their context,
 * each answering in a handler of a reserved real-time signal, and keep
 * them stopped there until released (a stop-the-world, as Boehm GC's and
 * LSan's). */
#ifndef EXECINFO_EX_THREAD_REQUEST_H
#define EXECINFO_EX_THREAD_REQUEST_H

#include <stdint.h>
#include <sys/types.h>

#include "thread_facts.h"

/* SIGRTMAX - 3 with glibc (whose SIGRTMAX is 64): one in from the end of
 * the range that programs count down from, as they count up from
 * SIGRTMIN. A program that uses it keeps its handler: ours passes on
 * every signal that is not our request (docs/DECISIONS.md). */
#define THREAD_REQUEST_SIGNAL 61

/* Slots for COUNT threads, each with FRAMES frames at most; the others
 * wait there for at most PARK_MS after answering. *FACTS and *TIDS get
 * the slots' facts and a tid array of COUNT entries. Returns 0 or a
 * negative errno (-ENOMEM). Signal-safe (mmap). */
int thread_request_prepare(int count, int frames, int park_ms, struct thread_facts **facts,
                           pid_t **tids);

/* Fault in at once the memory the first COUNT slots will write. Best
 * effort. Signal-safe. */
void thread_request_populate(int count);

/* Open a new round (a new generation: answers to older rounds are
 * refused) with our handler on THREAD_REQUEST_SIGNAL. Signal-safe. */
void thread_request_open_round(void);

/* Read /proc/self/maps once for every thread about to be asked: each
 * finds its stack there, instead of reading the file itself (with a
 * thousand threads, a thousand reads of a file of four thousand lines).
 * Without it (or when the table is full) a thread reads the file as any
 * walk does. Signal-safe. */
void thread_request_read_mappings(void);

/* Ask slot INDEX's thread (facts[INDEX].tid). Returns 0, -ESRCH (it has
 * exited) or another negative errno (the request could not be queued).
 * Signal-safe. */
int thread_request_send(int index);

/* Wait until ANSWERS slots have answered in this round, or until the
 * CLOCK_MONOTONIC time DEADLINE_NS. Returns how many have. Signal-safe. */
int thread_request_wait(int answers, int64_t deadline_ns);

/* Whether slot INDEX answered in this round. Signal-safe. */
int thread_request_answered(int index);

/* End the round's answers: an answer not begun by now is refused forever
 * (never written into a slot a later round reuses); one being written is
 * waited for, boundedly. Signal-safe. */
void thread_request_close_round(void);

/* Wait until every thread released by an earlier round has left its
 * park (it still blocks the request signal until its handler returns),
 * or until the CLOCK_MONOTONIC time DEADLINE_NS. Signal-safe. */
void thread_request_wait_departures(int64_t deadline_ns);

/* Let the threads that answered go on, and give the program its own
 * action for the signal back if no request of the round is still
 * pending (a pending one meets our handler, which refuses it). Signal-safe. */
void thread_request_release(void);

/* A thread handling a fatal signal of its own while another reports: it
 * notes its signal and context here, so that its answer is the crash's
 * context, not the handler's (forget when the wait is over). Signal-safe. */
void thread_request_note_crash(int signo, const void *ucontext);
void thread_request_forget_crash(void);

/* CLOCK_MONOTONIC in nanoseconds. Signal-safe. */
int64_t thread_request_now(void);

#endif
