/* thread_memo.c: a walk memo for every thread, without being asked.
 * World: signal-safe (atomics; gettid, getpid, tgkill and mmap, plain
 * syscalls, at a thread's first capture only).
 *
 * backtrace() and backtrace_ucontext() take no memo argument, so they
 * walk with one of a fixed table of slots, each a struct backtrace_memo
 * (one page, mapped when the slot is first claimed, never unmapped). A
 * thread finds its slot through one initial-exec TLS pointer: 8 bytes of
 * static TLS, which a dlopen'd copy of the library still gets (glibc's
 * surplus is a few hundred bytes); a global-dynamic variable would go
 * through __tls_get_addr, which may malloc at a thread's first access in
 * a dlopen'd library.
 *
 * Which thread may use a slot is decided by its busy word alone, taken
 * with an atomic exchange for the length of one capture: a signal handler
 * that interrupts a capture finds the slot busy and walks without a memo,
 * and so does a thread that shares a slot with another at the same
 * moment. So a slot is never read half-written, whoever else has it. Its
 * owner (a thread id) only says which thread should use it: a thread
 * claims a free slot, else one whose owner has exited (tgkill answers
 * ESRCH), else shares one. A memo's rules depend on the pc alone (walk_memo.c
 * checks the rule cache's generation at every capture), so a memo left by
 * an exited thread, or inherited by fork, is as good as a new one. The
 * memory is bounded: THREAD_MEMO_SLOTS pages at most, whatever the number
 * of threads made over a process's life.
 *
 * A capture abandoned by a siglongjmp out of a handler that interrupted
 * it leaves its slot busy for good: the threads that use it then walk
 * without a memo, as fast as before this file existed, and as exactly. */
#define _GNU_SOURCE
#include "thread_memo.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define THREAD_MEMO_SLOTS 256
/* Slots checked for an exited owner before sharing one: each is a syscall. */
#define EXITED_PROBES 32

struct thread_memo {
    atomic_int busy;                          /* 1 while a capture uses the memo */
    atomic_int owner;                         /* the thread id that claimed it, 0: free */
    struct backtrace_memo *_Atomic memo;      /* mapped by its first owner */
} __attribute__((aligned(64)));               /* one cache line: no sharing between threads */

static struct thread_memo slots[THREAD_MEMO_SLOTS];

/* This thread's slot; NULL before its first capture, FIRST_DONE after it
 * (a thread that captures once, a crash handler's, maps nothing: the
 * claim, the mapping and the first touch of their pages cost the capture
 * that makes them about 40-50 us on the benchmark's virtual machine,
 * where a page fault costs 10-15 us); CLAIMING while it claims one (a handler that interrupts the
 * claim walks without a memo). */
static __thread struct thread_memo *own __attribute__((tls_model("initial-exec")));
#define CLAIMING ((struct thread_memo *)1)
#define FIRST_DONE ((struct thread_memo *)2)

/* The slot's memo, mapped if it has none. Called by its owner only, so
 * that one mapping is made per slot. */
static int map_memo(struct thread_memo *slot)
{
    if (atomic_load_explicit(&slot->memo, memory_order_acquire) != NULL)
        return 1;
    void *page = mmap(NULL, sizeof(struct backtrace_memo), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 0;
    /* Zeroes: walk_memo.c makes it a memo of one struct at its first use. */
    atomic_store_explicit(&slot->memo, (struct backtrace_memo *)page, memory_order_release);
    return 1;
}

static int try_claim(struct thread_memo *slot, int expected, int tid)
{
    return atomic_compare_exchange_strong_explicit(&slot->owner, &expected, tid,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

/* A slot for this thread: a free one, else one whose owner exited, else
 * one to share (if mapped). NULL if none could be mapped. */
static struct thread_memo *claim(void)
{
    int tid = gettid(), pid = 0;
    unsigned start = (unsigned)tid * 2654435761u % THREAD_MEMO_SLOTS;
    for (unsigned i = 0; i < THREAD_MEMO_SLOTS; i++) {
        struct thread_memo *slot = &slots[(start + i) % THREAD_MEMO_SLOTS];
        if (atomic_load_explicit(&slot->owner, memory_order_relaxed) == 0 &&
            try_claim(slot, 0, tid))
            return map_memo(slot) ? slot : NULL;
    }
    for (unsigned i = 0; i < EXITED_PROBES; i++) {
        struct thread_memo *slot = &slots[(start + i) % THREAD_MEMO_SLOTS];
        int owner = atomic_load_explicit(&slot->owner, memory_order_relaxed);
        if (pid == 0)
            pid = getpid();
        if (owner != tid && tgkill(pid, owner, 0) < 0 && errno == ESRCH &&
            try_claim(slot, owner, tid))
            return map_memo(slot) ? slot : NULL;
    }
    struct thread_memo *shared = &slots[start];
    return atomic_load_explicit(&shared->memo, memory_order_acquire) != NULL ? shared : NULL;
}

struct thread_memo *thread_memo_take(void)
{
    struct thread_memo *slot = own;
    if (slot == NULL) {
        own = FIRST_DONE;
        return NULL;
    }
    if (slot == CLAIMING)
        return NULL;
    if (slot == FIRST_DONE) {
        own = CLAIMING;
        atomic_signal_fence(memory_order_seq_cst);
        slot = claim();
        atomic_signal_fence(memory_order_seq_cst);
        own = slot != NULL ? slot : FIRST_DONE; /* mmap failed: try again next time */
        if (slot == NULL)
            return NULL;
    }
    if (atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire) != 0)
        return NULL;
    return slot;
}

struct backtrace_memo *thread_memo_memo(struct thread_memo *held)
{
    return atomic_load_explicit(&held->memo, memory_order_relaxed);
}

void thread_memo_give_back(struct thread_memo *held)
{
    if (held != NULL)
        atomic_store_explicit(&held->busy, 0, memory_order_release);
}
