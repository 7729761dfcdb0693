/* thread_gather.h: every other thread of the process, stopped, with its
 * context and trace: the one piece of machinery behind the crash
 * report's threads, the dump on demand and the minidump. */
#ifndef EXECINFO_EX_THREAD_GATHER_H
#define EXECINFO_EX_THREAD_GATHER_H

#include "thread_facts.h"

struct gather_settings {
    int cap;          /* threads=: how many threads, the reporting one included */
    int timeout_ms;   /* threads_timeout_ms=: the one deadline of the gathering */
    int frames;       /* frames=: per thread */
    /* Wait the whole deadline for a thread that blocks the request signal
     * (it may unblock it soon: a thread starting, or one still leaving
     * the handler of the last gathering) rather than give up on it after
     * a few milliseconds, as a crash report does: a stop-the-world that
     * must see every thread's memory (the leak check) sets it. */
    int patient;
};

/* Stop and read every other thread (at most cap - 1 of them, the
 * smallest tids), within the deadline. SET describes them, by tid; a
 * thread that could not be read is there too, with why. Returns how many
 * answered, or a negative errno with SET->not_gathered set (-EBUSY:
 * another gathering is under way; -ENOMEM). Call thread_gather_release
 * after either. Signal-safe. */
int thread_gather(struct thread_set *set, const struct gather_settings *settings);

/* Let the stopped threads go on; the next gathering may start. Signal-safe. */
void thread_gather_release(struct thread_set *set);

#endif
