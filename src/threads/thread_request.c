/* thread_request.c: every other thread answers a reserved real-time
 * signal with its own context and trace, then waits in its handler until
 * released: a stop-the-world with a handshake, as Boehm GC's
 * pthread_stop_world.c and LSan do it, bounded at every wait.
 * World: signal-safe (sigaction, rt_tgsigqueueinfo, futex, mmap, atomics).
 *
 * The slots outlive a round. Each slot's state word holds the round's
 * generation and where its answer is; a thread takes its slot for
 * writing with a compare-and-swap from (this round, waiting), so an
 * answer that comes after the round closed, or in a later round, finds
 * another word and writes nothing. A slot some late thread is still
 * writing is never handed out again: prepare maps fresh slots instead. */
#define _GNU_SOURCE
#include "thread_request.h"
#include "thread_arch.h"
#include "../base/maps_reader.h"
#include "../fatal/crash_facts.h"
#include "../unwind/capture.h"
#include "../unwind/stack_walk.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum slot_step { SLOT_IDLE, SLOT_WAITING, SLOT_WRITING, SLOT_ANSWERED, SLOT_CLOSED };

#define REQUEST_MAGIC 0xe8e7ull             /* the cookie's top 16 bits */
#define CRASH_NOTES 8
#define WRITING_WAIT_NS (20 * 1000 * 1000)  /* an answer being written: its walk */
#define MAPPINGS_MAX 65536                  /* readable mappings kept: 1 MiB, reserved */

struct slots {
    _Atomic uint64_t *state;     /* generation << 8 | enum slot_step */
    pid_t *tids;
    struct thread_facts *facts;
    int capacity;
    int frames_each;             /* room for frames in each slot */
    void **frames;               /* every slot's frames, then their kinds */
    unsigned char *exact;
    size_t bytes;
};

static struct slots current;                 /* written by the one gatherer */
static _Atomic(struct thread_facts *) published_facts;
static _Atomic(_Atomic uint64_t *) published_state;
static atomic_int published_capacity;
static atomic_int slot_frames = 1;
static atomic_int park_limit_ms = 1000;
static _Atomic uint32_t generation;
static _Atomic uint32_t released_generation; /* futex word */
static _Atomic uint32_t answer_count;        /* futex word: answers this round */
static _Atomic uint32_t wake_at;             /* the answer that wakes the gatherer */
static struct memory_range *mappings;        /* readable mappings, by address */
static atomic_int mapping_count;             /* 0: none read this round */
static int round_count;                      /* slots asked this round */
static atomic_int round_pid;                 /* the asking process (a vfork child is another) */
static uid_t round_uid;
static atomic_int crash_note_count;          /* notes taken: 0 spares each answer a gettid */
static atomic_int parked;                    /* threads between their answer and their return */
static struct sigaction program_action;      /* what the program had, to pass on to */

static struct {
    atomic_int tid;
    int signo;
    const void *ucontext;
} crash_notes[CRASH_NOTES];

int64_t thread_request_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static uint64_t state_word(uint32_t round, enum slot_step step)
{
    return (uint64_t)round << 8 | step;
}

static void futex_wait(_Atomic uint32_t *word, uint32_t value, int64_t timeout_ns)
{
    struct timespec timeout = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, &timeout, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* ---- the answering side: runs in the handler of every asked thread ---- */

static const void *noted_crash(int *signo)
{
    if (atomic_load(&crash_note_count) == 0)
        return NULL;
    pid_t self = gettid();
    for (int i = 0; i < CRASH_NOTES; i++) {
        if (atomic_load(&crash_notes[i].tid) == self) {
            *signo = crash_notes[i].signo;
            return crash_notes[i].ucontext;
        }
    }
    return NULL;
}

/* The readable mapping that holds ADDRESS, from the gatherer's table;
 * NULL if none. */
static const struct memory_range *mapping_holding(uintptr_t address)
{
    int count = atomic_load(&mapping_count), low = 0, high = count;
    while (low < high) {
        int middle = low + (high - low) / 2;
        if (address >= mappings[middle].high)
            low = middle + 1;
        else
            high = middle;
    }
    return low < count && address >= mappings[low].low ? &mappings[low] : NULL;
}

static int readable(uintptr_t address, size_t length)
{
    const struct memory_range *mapping = mapping_holding(address);
    return mapping != NULL && length <= mapping->high - address;
}

/* Its name and its state before the request, as its stat file would have
 * said them (S asleep in a call, R running): the thread says them itself,
 * which spares the gatherer an open, a read and a close a thread, a
 * fifth of the report's time (docs/DECISIONS.md). Without the gatherer's
 * table of mappings no code byte is read (the pc of a thread that
 * crashed meanwhile may be anywhere): the state is unknown ('?'). */
static void describe_self(struct thread_facts *facts, const ucontext_t *ucontext)
{
    if (prctl(PR_GET_NAME, facts->name) != 0)
        facts->name[0] = '\0';
    facts->name[sizeof facts->name - 1] = '\0';
    if (atomic_load(&mapping_count) == 0)
        facts->state = '?';
    else
        facts->state = thread_arch_in_syscall(ucontext, readable) ? 'S' : 'R';
}

static void write_answer(struct thread_facts *facts, const ucontext_t *ucontext)
{
    int crashed = 0;
    const ucontext_t *crash = noted_crash(&crashed);
    if (crash != NULL) {
        ucontext = crash;
        facts->crashed_signo = crashed;
    }
    describe_self(facts, ucontext);
    const struct memory_range *stack = mapping_holding(thread_arch_stack_pointer(ucontext));
    if (stack != NULL)
        stack_walk_adopt_stack(stack);
    facts->have_float_state = crash_copy_context(&facts->context, ucontext);
    facts->have_context = 1;
    facts->thread_pointer = thread_arch_thread_pointer();
    facts->frame_count = capture_ucontext_kinds(facts->frames, facts->frame_exact,
                                                atomic_load(&slot_frames), ucontext);
    facts->outcome = THREAD_READ;
}

/* Wait here until released, or until the park limit: a gatherer that
 * never releases (killed, or writing to a pipe nobody reads) does not
 * stop the program for good. */
static void park(uint32_t round)
{
    int64_t limit = thread_request_now() + (int64_t)atomic_load(&park_limit_ms) * 1000000;
    for (;;) {
        uint32_t released = atomic_load(&released_generation);
        if ((int32_t)(released - round) >= 0)
            return;
        int64_t left = limit - thread_request_now();
        if (left <= 0)
            return;
        futex_wait(&released_generation, released, left);
    }
}

static int answer(const siginfo_t *info, void *ucontext)
{
    uint64_t cookie = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
    /* From the process that opened the round (a vfork child is another):
     * its pid, the cookie, and below the round's generation in a slot
     * waiting for it. */
    if (info->si_code != SI_QUEUE || cookie >> 48 != REQUEST_MAGIC ||
        info->si_pid != atomic_load(&round_pid))
        return 0;
    uint32_t round = (uint32_t)(cookie >> 16);
    int index = (int)(cookie & 0xffff);
    _Atomic uint64_t *state = atomic_load(&published_state);
    struct thread_facts *facts = atomic_load(&published_facts);
    if (state == NULL || index >= atomic_load(&published_capacity))
        return 1; /* ours, but from slots no longer there: nothing to write */
    uint64_t expected = state_word(round, SLOT_WAITING);
    if (!atomic_compare_exchange_strong(&state[index], &expected, state_word(round, SLOT_WRITING)))
        return 1; /* late: the round is closed, or over */
    write_answer(&facts[index], ucontext);
    atomic_store(&state[index], state_word(round, SLOT_ANSWERED));
    /* Only the answer the gatherer waits for wakes it: not a context
     * switch for each of a thousand threads. */
    atomic_fetch_add(&parked, 1);
    if (atomic_fetch_add(&answer_count, 1) + 1 >= atomic_load(&wake_at))
        futex_wake(&answer_count);
    park(round);
    atomic_fetch_sub(&parked, 1);
    return 1;
}

/* A signal that is not our request goes where the program meant it to. */
static void pass_on(int signo, siginfo_t *info, void *ucontext)
{
    struct sigaction action = program_action;
    if (action.sa_handler == SIG_IGN)
        return;
    if (action.sa_handler == SIG_DFL) {
        /* Its default action, termination, once this handler returns. */
        struct sigaction default_action;
        memset(&default_action, 0, sizeof default_action);
        default_action.sa_handler = SIG_DFL;
        sigaction(signo, &default_action, NULL);
        tgkill(getpid(), gettid(), signo);
        return;
    }
    sigset_t before;
    sigprocmask(SIG_BLOCK, &action.sa_mask, &before);
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signo, info, ucontext);
    else
        action.sa_handler(signo);
    sigprocmask(SIG_SETMASK, &before, NULL);
}

static void on_request(int signo, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    if (info == NULL || !answer(info, ucontext))
        pass_on(signo, info, ucontext);
    errno = saved_errno;
}

/* ---- the asking side: one gatherer at a time (thread_gather.c) ---- */

static int is_ours(const struct sigaction *action)
{
    return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == on_request;
}

static int slot_in_writing(const struct slots *slots)
{
    for (int i = 0; i < slots->capacity; i++)
        if ((atomic_load(&slots->state[i]) & 0xff) == SLOT_WRITING)
            return 1;
    return 0;
}

/* [states][tids][facts][frames][exact], one mapping; a slot's facts are
 * pointed at its FRAMES_EACH frames when it is first used
 * (thread_request_populate), not here: that would touch every page. */
static int map_slots(struct slots *slots, int capacity, int frames_each)
{
    size_t state_bytes = (size_t)capacity * sizeof *slots->state;
    size_t tid_bytes = ((size_t)capacity * sizeof(pid_t) + 63) & ~(size_t)63;
    size_t facts_bytes = (size_t)capacity * sizeof(struct thread_facts);
    size_t frame_bytes = (size_t)capacity * (size_t)frames_each * sizeof(void *);
    size_t bytes = state_bytes + tid_bytes + facts_bytes + frame_bytes +
                   (size_t)capacity * (size_t)frames_each;
    char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED)
        return -ENOMEM;
    slots->state = (_Atomic uint64_t *)memory;
    slots->tids = (pid_t *)(memory + state_bytes);
    slots->facts = (struct thread_facts *)(memory + state_bytes + tid_bytes);
    slots->frames = (void **)(memory + state_bytes + tid_bytes + facts_bytes);
    slots->exact = (unsigned char *)(slots->frames + (size_t)capacity * (size_t)frames_each);
    slots->capacity = capacity;
    slots->frames_each = frames_each;
    slots->bytes = bytes;
    return 0;
}

int thread_request_prepare(int count, int frames, int park_ms, struct thread_facts **facts,
                           pid_t **tids)
{
    if (count < 1)
        count = 1;
    frames = frames < 1 ? 1 : frames > THREAD_FRAMES_MAX ? THREAD_FRAMES_MAX : frames;
    /* Slots too few or too small, or one still being written by a late
     * answer: new ones. The old are left mapped (a late writer may be
     * inside them); this is rare (a larger cap, or a thread stopped
     * mid-answer). */
    if (current.capacity < count || current.frames_each < frames || slot_in_writing(&current)) {
        struct slots fresh;
        int error = map_slots(&fresh, count > 64 ? count : 64, frames);
        if (error < 0)
            return error;
        current = fresh;
        atomic_store(&published_capacity, 0);
        atomic_store(&published_facts, current.facts);
        atomic_store(&published_state, current.state);
        atomic_store(&published_capacity, current.capacity);
    }
    atomic_store(&slot_frames, frames);
    atomic_store(&park_limit_ms, park_ms);
    round_count = count;
    *facts = current.facts;
    *tids = current.tids;
    return 0;
}

/* Fault in, in one call, the pages COUNT slots will write (page by page,
 * each fault costs more: 10 to 25 us on a virtual machine; best effort,
 * MADV_POPULATE_WRITE is Linux 5.14's), and point their facts at their
 * frames. Signal-safe. */
void thread_request_populate(int count)
{
    if (count <= 0 || count > current.capacity)
        return;
    uintptr_t page = 4096, each = (uintptr_t)current.frames_each;
    uintptr_t facts_start = (uintptr_t)&current.facts[0] & ~(page - 1);
    uintptr_t facts_end = (uintptr_t)&current.facts[count];
    uintptr_t frames_start = (uintptr_t)current.frames & ~(page - 1);
    uintptr_t frames_end = (uintptr_t)(current.frames + (uintptr_t)count * each);
    syscall(SYS_madvise, facts_start, facts_end - facts_start, 23 /* MADV_POPULATE_WRITE */);
    syscall(SYS_madvise, frames_start, frames_end - frames_start, 23);
    for (int i = 0; i < count; i++) {
        current.facts[i].frames = current.frames + (uintptr_t)i * each;
        current.facts[i].frame_exact = current.exact + (uintptr_t)i * each;
    }
}

static void install_handler(void)
{
    struct sigaction before, ours;
    if (sigaction(THREAD_REQUEST_SIGNAL, NULL, &before) != 0 || is_ours(&before))
        return;
    program_action = before; /* before ours goes in: a signal in between passes on */
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_request;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    sigaction(THREAD_REQUEST_SIGNAL, &ours, NULL);
}

static int keep_mapping(const struct maps_entry *entry, void *unused)
{
    (void)unused;
    int count = atomic_load(&mapping_count);
    if (!entry->readable)
        return 0;
    if (count >= MAPPINGS_MAX)
        return 1;
    mappings[count] = (struct memory_range){ entry->start, entry->end };
    atomic_store(&mapping_count, count + 1);
    return 0;
}

void thread_request_read_mappings(void)
{
    if (mappings == NULL) {
        void *memory = mmap(NULL, MAPPINGS_MAX * sizeof *mappings, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (memory == MAP_FAILED)
            return;
        mappings = memory;
    }
    atomic_store(&mapping_count, 0);
    if (maps_for_each(keep_mapping, NULL) < 0)
        atomic_store(&mapping_count, 0);
}

void thread_request_open_round(void)
{
    install_handler();
    uint32_t round = atomic_fetch_add(&generation, 1) + 1;
    atomic_store(&round_pid, getpid());
    round_uid = getuid();
    atomic_store(&answer_count, 0);
    for (int i = 0; i < round_count; i++)
        atomic_store(&current.state[i], state_word(round, SLOT_IDLE));
}

int thread_request_send(int index)
{
    uint32_t round = atomic_load(&generation);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = THREAD_REQUEST_SIGNAL;
    info.si_code = SI_QUEUE;
    info.si_pid = atomic_load(&round_pid);
    info.si_uid = round_uid;
    info.si_value.sival_ptr =
        (void *)(uintptr_t)(REQUEST_MAGIC << 48 | (uint64_t)round << 16 | (uint64_t)index);
    atomic_store(&current.state[index], state_word(round, SLOT_WAITING));
    if (syscall(SYS_rt_tgsigqueueinfo, info.si_pid, current.facts[index].tid,
                THREAD_REQUEST_SIGNAL, &info) == 0)
        return 0;
    int error = -errno;
    atomic_store(&current.state[index], state_word(round, SLOT_IDLE));
    return error;
}

int thread_request_wait(int answers, int64_t deadline_ns)
{
    atomic_store(&wake_at, (uint32_t)answers); /* before the count is read: no wake missed */
    for (;;) {
        uint32_t now_answered = atomic_load(&answer_count);
        if ((int)now_answered >= answers)
            return (int)now_answered;
        int64_t left = deadline_ns - thread_request_now();
        if (left <= 0)
            return (int)now_answered;
        futex_wait(&answer_count, now_answered, left);
    }
}

int thread_request_answered(int index)
{
    uint32_t round = atomic_load(&generation);
    return atomic_load(&current.state[index]) == state_word(round, SLOT_ANSWERED);
}

void thread_request_close_round(void)
{
    uint32_t round = atomic_load(&generation);
    /* One bound for all the answers being written, not one each. */
    int64_t limit = thread_request_now() + WRITING_WAIT_NS;
    for (int i = 0; i < round_count; i++) {
        uint64_t expected = state_word(round, SLOT_WAITING);
        if (atomic_compare_exchange_strong(&current.state[i], &expected,
                                           state_word(round, SLOT_CLOSED)))
            continue;
        struct timespec pause = { 0, 100 * 1000 };
        while (atomic_load(&current.state[i]) == state_word(round, SLOT_WRITING) &&
               thread_request_now() < limit)
            nanosleep(&pause, NULL);
    }
}

static int requests_pending(void)
{
    uint32_t round = atomic_load(&generation);
    for (int i = 0; i < round_count; i++) {
        uint64_t state = atomic_load(&current.state[i]);
        if (state == state_word(round, SLOT_CLOSED) || state == state_word(round, SLOT_WRITING))
            return 1; /* sent, never answered: it may still be delivered */
    }
    return 0;
}

void thread_request_wait_departures(int64_t deadline_ns)
{
    /* A fork child: the parked threads were its parent's. */
    if (atomic_load(&round_pid) != getpid())
        atomic_store(&parked, 0);
    struct timespec pause = { 0, 100 * 1000 };
    while (atomic_load(&parked) > 0 && thread_request_now() < deadline_ns)
        nanosleep(&pause, NULL);
}

void thread_request_release(void)
{
    atomic_store(&released_generation, atomic_load(&generation));
    futex_wake(&released_generation);
    struct sigaction now;
    if (!requests_pending() && sigaction(THREAD_REQUEST_SIGNAL, NULL, &now) == 0 && is_ours(&now))
        sigaction(THREAD_REQUEST_SIGNAL, &program_action, NULL);
}

void thread_request_note_crash(int signo, const void *ucontext)
{
    /* Claimed with -1 first, so that no reader takes a half-written note. */
    for (int i = 0; i < CRASH_NOTES; i++) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&crash_notes[i].tid, &expected, -1))
            continue;
        crash_notes[i].signo = signo;
        crash_notes[i].ucontext = ucontext;
        atomic_store(&crash_notes[i].tid, gettid());
        atomic_fetch_add(&crash_note_count, 1);
        return;
    }
}

void thread_request_forget_crash(void)
{
    pid_t self = gettid();
    for (int i = 0; i < CRASH_NOTES; i++) {
        if (atomic_load(&crash_notes[i].tid) == self) {
            atomic_store(&crash_notes[i].tid, 0);
            atomic_fetch_sub(&crash_note_count, 1);
        }
    }
}
