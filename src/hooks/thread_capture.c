/* thread_capture.c: the stack and thread of an allocation or a free, as a
 * depot id, with what each thread keeps between captures.
 * World: normal (inside malloc and free: mmap, a thread-specific key; the
 * walk itself is the core library's AS-Safe one).
 *
 * Each thread keeps a memo of its last capture for allocations, one for
 * frees (their paths through this library differ) and one for mtrace's
 * stack lines, and the stacks it stored last. They live in a mapping of
 * their own, made at the thread's first capture and unmapped at its exit
 * (a thread-specific key's destructor), reached through one initial-exec
 * TLS pointer: kilobytes of initial-exec TLS would make the library
 * impossible to dlopen (glibc's static TLS surplus is small). Used under
 * heap_busy == 0 only (heap.c), so never by two captures at once: a
 * signal handler's malloc in the middle of one is recorded without a
 * stack. */
#define _GNU_SOURCE
#include "heap.h"
#include "stack_counts.h"
#include "execinfo_ex.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

/* The stacks this thread stored last, direct-mapped by their depot hash.
 * A program allocates in loops, so the stack of a capture is often one
 * it stored a moment ago: found here, it needs neither the depot's table
 * nor its entry, which are cold memory in a big program. One hash serves
 * this cache and the depot (stack_depot_put_hashed); a list of the last 8
 * scanned in turn, each with a signature of its own, cost twice the
 * hashing and up to 8 compares for a miss. */
#define RECENT_SLOT_BITS 5
#define RECENT_SLOTS (1u << RECENT_SLOT_BITS)
#define RECENT_MAX_WORDS 18        /* the thread and 17 frames */

struct recent_stack {
    stack_id id;                   /* 0: empty */
    uint32_t hash;
    int count;
    void *words[RECENT_MAX_WORDS];
};

/* The allocation and free memos are backtrace_memo_init's larger kind:
 * the rules of 1,024 return addresses each, where one struct keeps 255.
 * CPython's allocations step through more than 256: with one struct its
 * replays stopped at a missing rule about 5 times a capture (measured
 * with a counter: 18 million misses in 3.8 million captures; 0.15
 * million with 4,096 rules), and each miss is a full step. 4 structs
 * did as well as 16 on CPython and churn (3,364 M against 3,348 M
 * instructions; 1,086 M against 1,083 M) for a quarter of the memory:
 * 16 KiB a kind, written at the kind's first capture: a thread that never
 * captures a free stack (no quarantine: the profiler) never touches the
 * free memos. */
#define CAPTURE_MEMO_STRUCTS 4

struct thread_memory {
    struct backtrace_memo memos[HEAP_CAPTURE_REPORT][CAPTURE_MEMO_STRUCTS]; /* allocation, free */
    struct backtrace_memo trace_memo;
    struct recent_stack recent[RECENT_SLOTS];
    int memo_ready[HEAP_CAPTURE_REPORT];   /* memos[kind] initialised */
};

static __thread struct thread_memory *own __attribute__((tls_model("initial-exec")));
/* Set once the thread's memory was given back: the frees glibc makes
 * after the key destructors (__libc_thread_freeres) capture without it,
 * instead of mapping it again for good. */
static __thread int exited __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void unmap_at_exit(void *memory)
{
    stack_counts_flush(); /* the live bytes this thread kept to itself */
    if (memory == own)
        own = NULL;
    exited = 1;
    munmap(memory, sizeof(struct thread_memory));
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, unmap_at_exit);
}

/* This thread's memory, mapped at its first use; NULL if mmap failed (the
 * captures then go on without it). */
static struct thread_memory *thread_memory(void)
{
    if (own != NULL)
        return own;
    if (exited)
        return NULL;
    pthread_once(&exit_key_once, make_exit_key);
    void *map = mmap(NULL, sizeof(struct thread_memory), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    own = map; /* zeroes: no recent stacks, no memo ready */
    pthread_setspecific(exit_key, map);
    return own;
}

struct backtrace_memo *heap_trace_memo(void)
{
    struct thread_memory *memory = thread_memory();
    return memory != NULL ? &memory->trace_memo : NULL;
}

static stack_id put_through_recent(struct thread_memory *memory, void **words, int count)
{
    if (memory == NULL || count < 2 || count > RECENT_MAX_WORDS)
        return stack_depot_put(words, count);
    uint32_t hash = stack_depot_hash(words, count);
    /* The depot's table takes the low bits: these are the high ones. */
    struct recent_stack *r = &memory->recent[hash >> (32 - RECENT_SLOT_BITS)];
    if (r->id != 0 && r->hash == hash && r->count == count &&
        memcmp(r->words, words, (size_t)count * sizeof *words) == 0)
        return r->id;
    stack_id id = stack_depot_put_hashed(words, count, hash);
    if (id != 0) {
        r->id = id;
        r->hash = hash;
        r->count = count;
        memcpy(r->words, words, (size_t)count * sizeof *words);
    }
    return id;
}

/* The depot entry: the thread first, then the frames, from the first one
 * outside this library (the caller of malloc): from the caller's frame as
 * the entry point saw it, when there is one. A report's capture uses
 * neither memo, nor the recent stacks, nor the entry's caller: it may come
 * from anywhere. */
stack_id heap_capture(enum heap_capture_kind kind)
{
    struct thread_memory *memory = kind == HEAP_CAPTURE_REPORT ? NULL : thread_memory();
    void *words[STACK_DEPOT_MAX_FRAMES + 1];
    struct backtrace_memo *memo = memory != NULL ? memory->memos[kind] : NULL;
    if (memo != NULL && !memory->memo_ready[kind]) {
        backtrace_memo_init(memo, CAPTURE_MEMO_STRUCTS);
        memory->memo_ready[kind] = 1;
    }
    const struct backtrace_caller *caller = kind == HEAP_CAPTURE_REPORT ? NULL : heap_caller;
    int frames = kind != HEAP_CAPTURE_FREE          ? heap.options.heap_frames
                 : heap.options.free_frames > 0 ? heap.options.free_frames
                                                : 1; /* free_frames=0: the call site */
    int count = caller != NULL
                    ? backtrace_from_caller(words + 1, frames, caller, memo)
                    : backtrace_skip_range(words + 1, frames, (const void *)heap.own_start,
                                           (const void *)heap.own_end, memo);
    words[0] = (void *)(uintptr_t)heap_thread_id();
    return put_through_recent(memory, words, count + 1);
}

/* Frames the deeper look walks (1 KiB of stack, inside malloc): a
 * library frame further out than this is not looked for. The case that
 * needs the look, the core's dlopen of libdw at load on aarch64, has it
 * just past the 16 frames a capture keeps. */
#define DEEPER_FRAMES 128

int heap_capture_reaches_library(void)
{
    void *frames[DEEPER_FRAMES];
    int count = backtrace_skip_range(frames, DEEPER_FRAMES, (const void *)heap.own_start,
                                     (const void *)heap.own_end, NULL);
    return count > 0 && stack_counts_in_excluded(frames, count);
}
