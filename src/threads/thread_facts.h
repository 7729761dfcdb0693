/* thread_facts.h: what is known of one thread of the process at a crash
 * or a dump, as a plain struct, so that every renderer (text, JSON,
 * minidump) is a pure function of it.
 * World: signal-safe (plain data). */
#ifndef EXECINFO_EX_THREAD_FACTS_H
#define EXECINFO_EX_THREAD_FACTS_H

#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

#define THREAD_FRAMES_MAX 256
#define THREAD_NAME_MAX 16        /* the kernel's comm, with its NUL */
#define THREADS_CAP_MAX 16384     /* threads=: the most a gathering reads */

/* How the gathering went for one thread. The words of thread_outcome_words
 * are fixed: tests and tools match them. */
enum thread_outcome {
    THREAD_READ,            /* it answered: context and frames */
    THREAD_BLOCKS_SIGNALS,  /* "blocks every signal": it blocks the request signal */
    THREAD_NO_ANSWER,       /* "did not answer within N ms" (D state, ptrace-stop, ...) */
    THREAD_EXITED,          /* "exited": gone before it could answer */
    THREAD_NOT_STOPPED,     /* "could not be stopped": the request could not be sent */
};

struct thread_facts {
    pid_t tid;
    char name[THREAD_NAME_MAX];
    char state;                   /* /proc/self/task/TID/stat: R S D T t Z X, '?' unknown */
    enum thread_outcome outcome;
    int blocks_all;               /* THREAD_BLOCKS_SIGNALS: every signal, not only ours */
    int crashed_signo;            /* it was handling a fatal signal of its own: the signal */
    /* Its registers where it was interrupted (THREAD_READ): a copy of the
     * ucontext its handler got, with uc_mcontext.fpregs pointing at this
     * copy's __fpregs_mem (have_float_state: the kernel gave them). */
    int have_context;
    int have_float_state;
    ucontext_t context;
    /* Its thread pointer (thread_arch_thread_pointer), said by the thread
     * itself when it answered: where its static TLS is. 0: unknown. */
    uintptr_t thread_pointer;
    /* /proc/self/task/TID/syscall, for a thread that did not answer: the
     * syscall it is blocked in (-1: none, in user space) with its stack
     * pointer and pc, where the kernel shows them. */
    int have_syscall;
    long syscall;
    uintptr_t syscall_sp, syscall_pc;
    /* Its trace, interrupted pc first (frame_exact as in crash_facts), in
     * the gathering's memory: frames= of them a thread, not
     * THREAD_FRAMES_MAX, so that a slot fits in fewer pages. */
    int frame_count;
    void **frames;
    unsigned char *frame_exact;
};

/* Every thread but the reporting one, by tid, and what was left out. */
struct thread_set {
    struct thread_facts *threads; /* in mmap'd memory owned by the gathering */
    int count;
    int seen;                     /* threads listed in /proc/self/task, the reporter too */
    int left_out;                 /* past the threads= cap */
    int emulator_threads;         /* qemu-user's own, not in seen (thread_emulator.c) */
    int cap;                      /* threads=: the reporter included */
    int timeout_ms;
    int not_gathered;             /* nonzero: why nothing was gathered (a -errno) */
};

/* "blocks every signal", ..., in fixed words. Signal-safe. */
const char *thread_outcome_words(enum thread_outcome outcome);

/* "running", "sleeping", "disk sleep", ... for a state letter. Signal-safe. */
const char *thread_state_name(char state);

#endif
