/* stop_methods.c: how long it takes one thread to get every other thread's
 * registers, two ways (issue 23), so that docs/DECISIONS.md can say why
 * the library signals its threads instead of ptracing them. A benchmark,
 * not a test: it prints tables and asserts no timing. x86-64 only
 * (PTRACE_GETREGS, the raw syscall instruction).
 *
 *   a (signal)   list /proc/self/task with getdents64, queue a real-time
 *                signal with a cookie to each thread (rt_tgsigqueueinfo);
 *                each handler copies its ucontext and fpstate into a slot
 *                made in advance, counts itself in, and waits on a futex
 *                until the gatherer releases every thread at once.
 *   b (ptrace)   the same list, then a helper made by clone(CLONE_VM |
 *                CLONE_FS | CLONE_FILES | CLONE_UNTRACED) on its own stack
 *                seizes and interrupts every thread, waits for each stop
 *                (waitpid __WALL), reads PTRACE_GETREGS and GETFPREGS, and
 *                detaches all; the gatherer waits for the helper to exit.
 *   c (breakpad) Breakpad's own shape: clone(CLONE_FILES | CLONE_FS |
 *                CLONE_UNTRACED), so the helper has a copy of the address
 *                space and writes into a MAP_SHARED area, and each thread
 *                is PTRACE_ATTACHed and waited for in turn.
 *
 * Times: "gathered" is from the first step (listing) to the last context
 * in hand; "released" adds letting every thread go: a's FUTEX_WAKE
 * returned, b's and c's helper detached every thread and was reaped.
 * "resumed" (a only) is until every handler has returned.
 *
 * The threads sleep in FUTEX_WAIT or spin (at most 16 spinning: see
 * MAX_SPINNING); 64 KiB stacks so that 1,000 fit.
 * Every repetition runs a, b and c once each in an order that rotates
 * (bench/timing.h explains why); medians of 21 repetitions by default.
 * By default the process is pinned to one CPU (BENCH_CPU, else the first
 * allowed), as the other benchmarks are, and every table is run again
 * unpinned. After the tables come the observations: a thread that blocks
 * every signal, which blocking calls return EINTR, a seccomp filter that
 * denies ptrace, and a process already traced by a debugger-like tracer.
 *
 *   stop_methods [-r REPETITIONS] [-n 1,16,256,1000] [-m sleep,spin]
 *                [-p both|on|off] [-O (no observations)] */
#define _GNU_SOURCE
#include "../timing.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define STACK_SIZE (64 * 1024)
#define ANSWER_SIGNAL (SIGRTMAX - 3)
/* More spinning threads than that and every round waits for time slices:
 * with 256 spinning on one CPU (5 rounds) a gathered in 3 ms but its
 * threads took 2 s to leave their handlers, b took 41 ms to gather and c
 * 83 s; the whole run took 9 minutes. */
#define MAX_SPINNING 16
#define BENCH_DEADLINE_NS 2000000000ull
#define OBSERVE_DEADLINE_NS 200000000ull

/* ---- raw system calls ---------------------------------------------------
 * The signal handler and the helper (which shares the gatherer's TLS when
 * it has CLONE_VM) must not touch errno: they return -errno instead. */

static long raw_syscall(long number, long a, long b, long c, long d, long e)
{
    long result;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;

    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return result;
}

static long futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec timeout = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};

    return raw_syscall(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, expected,
                       timeout_ns ? (long)&timeout : 0, 0);
}

static void futex_wake(_Atomic uint32_t *word, int count)
{
    raw_syscall(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, count, 0, 0);
}

static long ptrace_raw(long request, pid_t tid, void *address, void *data)
{
    return raw_syscall(SYS_ptrace, request, tid, (long)address, (long)data, 0);
}

static long wait_raw(pid_t pid, int *status)
{
    long result;

    do
        result = raw_syscall(SYS_wait4, pid, (long)status, __WALL, 0, 0);
    while (result == -EINTR);
    return result;
}

/* ---- the shared state -----------------------------------------------------
 * One MAP_SHARED area, so that c's helper (a copy of this process, not a
 * thread of it) writes where the gatherer reads. */

struct slot {
    _Atomic uint32_t answered;   /* the round that filled it */
    int error;                   /* b and c: -errno of the step that failed */
    pid_t tid;
    ucontext_t context;          /* a */
    struct _libc_fpstate fpstate; /* a (from the signal frame) */
    struct user_regs_struct regs; /* b and c */
    struct user_fpregs_struct fpregs;
};

struct shared {
    _Atomic uint32_t round;    /* the round being gathered; 0: none */
    _Atomic uint32_t count;    /* threads asked in this round */
    _Atomic uint32_t answered; /* how many handlers have filled their slot */
    _Atomic uint32_t released; /* the round whose handlers may return */
    _Atomic uint32_t departed; /* how many handlers have returned */
    uint64_t helper_gathered_ns; /* b and c: the helper's clock at the last stop */
    pid_t tids[MAX_THREADS];
    struct slot slots[MAX_THREADS];
};

static struct shared *shared;
static pid_t process_id;

/* ---- listing the threads ------------------------------------------------- */

struct dirent64_raw {
    uint64_t inode;
    int64_t offset;
    unsigned short length;
    unsigned char type;
    char name[];
};

static pid_t parse_tid(const char *name)
{
    pid_t tid = 0;

    for (; *name; name++) {
        if (*name < '0' || *name > '9')
            return 0;
        tid = tid * 10 + (*name - '0');
    }
    return tid;
}

/* Every thread of this process but the caller, into shared->tids, with no
 * malloc and no opendir; the count or -errno. */
static int list_threads(void)
{
    char buffer[8192] __attribute__((aligned(8)));
    pid_t self = (pid_t)raw_syscall(SYS_gettid, 0, 0, 0, 0, 0);
    int fd = (int)raw_syscall(SYS_open, (long)"/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    int count = 0;
    long length;

    if (fd < 0)
        return fd;
    while ((length = raw_syscall(SYS_getdents64, fd, (long)buffer, sizeof buffer, 0, 0)) > 0) {
        for (long at = 0; at < length;) {
            struct dirent64_raw *entry = (struct dirent64_raw *)(buffer + at);
            pid_t tid = parse_tid(entry->name);
            if (tid > 0 && tid != self && count < MAX_THREADS)
                shared->tids[count++] = tid;
            at += entry->length;
        }
    }
    raw_syscall(SYS_close, fd, 0, 0, 0, 0);
    return length < 0 ? (int)length : count;
}

/* ---- a: signal each thread ----------------------------------------------- */

static void copy_context(struct slot *slot, const ucontext_t *context)
{
    __builtin_memcpy(&slot->context, context, sizeof slot->context);
    if (context->uc_mcontext.fpregs)
        __builtin_memcpy(&slot->fpstate, context->uc_mcontext.fpregs, sizeof slot->fpstate);
    slot->tid = (pid_t)raw_syscall(SYS_gettid, 0, 0, 0, 0, 0);
}

/* The cookie names the round and the slot, so that an answer that comes
 * after its round was given up can never write into a later round's slot. */
static void answer_handler(int signo, siginfo_t *info, void *context)
{
    (void)signo;
    if (info->si_code != SI_QUEUE || info->si_pid != process_id)
        return;
    uint64_t cookie = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
    uint32_t round = (uint32_t)(cookie >> 32), index = (uint32_t)cookie;
    if (round != atomic_load(&shared->round) || index >= atomic_load(&shared->count))
        return;
    copy_context(&shared->slots[index], context);
    atomic_store_explicit(&shared->slots[index].answered, round, memory_order_release);
    if (atomic_fetch_add(&shared->answered, 1) + 1 == atomic_load(&shared->count))
        futex_wake(&shared->answered, 1);
    uint32_t released;
    while ((released = atomic_load(&shared->released)) != round)
        futex_wait(&shared->released, released, 0);
    atomic_fetch_add(&shared->departed, 1);
    futex_wake(&shared->departed, 1);
}

static void install_answer_handler(void)
{
    struct sigaction action = {.sa_sigaction = answer_handler, .sa_flags = SA_SIGINFO | SA_RESTART};

    sigfillset(&action.sa_mask);
    sigaction(ANSWER_SIGNAL, &action, NULL);
}

/* Wait until *WORD reaches TARGET or DEADLINE (a now_ns time) passes. */
static bool wait_for_count(_Atomic uint32_t *word, uint32_t target, uint64_t deadline)
{
    uint32_t seen;

    while ((seen = atomic_load(word)) < target) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return false;
        futex_wait(word, seen, deadline - now);
    }
    return true;
}

static int send_answer_signals(int count, uint32_t round)
{
    int sent = 0;

    for (int i = 0; i < count; i++) {
        siginfo_t info = {.si_signo = ANSWER_SIGNAL, .si_code = SI_QUEUE};
        info.si_pid = process_id;
        info.si_uid = getuid();
        info.si_value.sival_ptr = (void *)(uintptr_t)((uint64_t)round << 32 | (uint32_t)i);
        if (raw_syscall(SYS_rt_tgsigqueueinfo, process_id, shared->tids[i], ANSWER_SIGNAL, (long)&info, 0) == 0)
            sent++;
    }
    return sent;
}

struct round_times {
    double gathered_us, released_us, resumed_us;
    int asked, answered;
    int first_error; /* b and c: the first failure's -errno */
};

static struct round_times gather_by_signal(uint64_t deadline_ns)
{
    static uint32_t round_counter;
    struct round_times times = {0};
    uint64_t start = now_ns();
    int count = list_threads();
    uint32_t round = ++round_counter;

    atomic_store(&shared->count, (uint32_t)(count > 0 ? count : 0));
    atomic_store(&shared->answered, 0);
    atomic_store(&shared->departed, 0);
    atomic_store(&shared->round, round);
    send_answer_signals(count, round);
    wait_for_count(&shared->answered, (uint32_t)count, start + deadline_ns);
    times.gathered_us = (double)(now_ns() - start) / 1e3;
    atomic_store(&shared->round, 0); /* late answers: go back at once */
    atomic_store(&shared->released, round);
    futex_wake(&shared->released, INT_MAX);
    times.released_us = (double)(now_ns() - start) / 1e3;
    times.asked = count;
    times.answered = (int)atomic_load(&shared->answered);
    wait_for_count(&shared->departed, (uint32_t)times.answered, now_ns() + deadline_ns);
    times.resumed_us = (double)(now_ns() - start) / 1e3;
    return times;
}

/* ---- b and c: a helper that ptraces them ---------------------------------- */

static void read_stopped(struct slot *slot, pid_t tid)
{
    long result = ptrace_raw(PTRACE_GETREGS, tid, NULL, &slot->regs);
    if (result == 0)
        result = ptrace_raw(PTRACE_GETFPREGS, tid, NULL, &slot->fpregs);
    slot->tid = tid;
    slot->error = (int)result;
    if (result == 0)
        atomic_store(&slot->answered, atomic_load(&shared->round));
}

/* b: seize and interrupt every thread first, then collect the stops. */
static int helper_seize(void *argument)
{
    int count = (int)(intptr_t)argument;

    for (int i = 0; i < count; i++) {
        pid_t tid = shared->tids[i];
        long result = ptrace_raw(PTRACE_SEIZE, tid, NULL, NULL);
        if (result == 0)
            result = ptrace_raw(PTRACE_INTERRUPT, tid, NULL, NULL);
        shared->slots[i].error = (int)result;
    }
    for (int i = 0; i < count; i++) {
        int status;
        if (shared->slots[i].error != 0)
            continue;
        if (wait_raw(shared->tids[i], &status) > 0)
            read_stopped(&shared->slots[i], shared->tids[i]);
        else
            shared->slots[i].error = -ECHILD;
    }
    shared->helper_gathered_ns = now_ns();
    for (int i = 0; i < count; i++)
        if (shared->slots[i].error == 0)
            ptrace_raw(PTRACE_DETACH, shared->tids[i], NULL, NULL);
    return 0;
}

/* c: as Breakpad's SuspendThread does, attach and wait one thread at a time. */
static int helper_attach(void *argument)
{
    int count = (int)(intptr_t)argument;

    for (int i = 0; i < count; i++) {
        pid_t tid = shared->tids[i];
        int status;
        long result = ptrace_raw(PTRACE_ATTACH, tid, NULL, NULL);
        if (result == 0)
            result = wait_raw(tid, &status) > 0 ? 0 : -ECHILD;
        shared->slots[i].error = (int)result;
        if (result == 0)
            read_stopped(&shared->slots[i], tid);
    }
    shared->helper_gathered_ns = now_ns();
    for (int i = 0; i < count; i++)
        if (shared->slots[i].error == 0)
            ptrace_raw(PTRACE_DETACH, shared->tids[i], NULL, NULL);
    return 0;
}

static void *helper_stack_top(void)
{
    static void *stack;

    if (!stack)
        stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return (char *)stack + STACK_SIZE;
}

static struct round_times gather_by_ptrace(bool breakpad_shape)
{
    static uint32_t round_counter = 1u << 30; /* apart from a's rounds */
    struct round_times times = {0};
    uint64_t start = now_ns();
    int count = list_threads();
    int flags = breakpad_shape ? CLONE_FILES | CLONE_FS | CLONE_UNTRACED
                               : CLONE_VM | CLONE_FILES | CLONE_FS | CLONE_UNTRACED;

    atomic_store(&shared->round, ++round_counter);
    pid_t helper = clone(breakpad_shape ? helper_attach : helper_seize, helper_stack_top(),
                         flags | SIGCHLD, (void *)(intptr_t)count);
    int status;
    if (helper > 0)
        wait_raw(helper, &status);
    uint64_t end = now_ns();
    times.asked = count;
    for (int i = 0; i < count; i++) {
        if (shared->slots[i].error == 0)
            times.answered++;
        else if (!times.first_error)
            times.first_error = shared->slots[i].error;
    }
    times.gathered_us = (double)(shared->helper_gathered_ns - start) / 1e3;
    times.released_us = times.resumed_us = (double)(end - start) / 1e3;
    atomic_store(&shared->round, 0);
    return times;
}

/* ---- the threads to stop ------------------------------------------------- */

enum sleeper_mode { SLEEP_FUTEX, SLEEP_SPIN, SLEEP_EPOLL, SLEEP_FUTEX_ALL_BLOCKED };
static const char *const mode_names[] = {"sleep", "spin", "epoll", "blocked"};

struct sleepers {
    pthread_t threads[MAX_THREADS];
    int count;
    enum sleeper_mode modes[MAX_THREADS];
    _Atomic uint32_t started;
    _Atomic uint32_t stop;
    _Atomic int eintr;  /* blocking calls that returned EINTR, all threads */
    int epoll_fd, event_fd;
};

static struct sleepers sleepers;

/* Every signal, SIGCANCEL and SIGSETXID too: glibc's pthread_sigmask keeps
 * those two open, the raw call does not. */
static void block_every_signal(void)
{
    uint64_t all = ~0ull;

    raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, sizeof all, 0);
}

static void sleep_in_epoll(void)
{
    struct epoll_event event;

    while (!atomic_load(&sleepers.stop))
        if (epoll_wait(sleepers.epoll_fd, &event, 1, -1) < 0 && errno == EINTR)
            atomic_fetch_add(&sleepers.eintr, 1);
}

static void sleep_in_futex(void)
{
    while (!atomic_load(&sleepers.stop))
        if (futex_wait(&sleepers.stop, 0, 0) == -EINTR)
            atomic_fetch_add(&sleepers.eintr, 1);
}

static void *sleeper_main(void *argument)
{
    enum sleeper_mode mode = sleepers.modes[(intptr_t)argument];

    if (mode == SLEEP_FUTEX_ALL_BLOCKED)
        block_every_signal();
    atomic_fetch_add(&sleepers.started, 1);
    if (mode == SLEEP_SPIN)
        while (!atomic_load_explicit(&sleepers.stop, memory_order_relaxed))
            __builtin_ia32_pause();
    else if (mode == SLEEP_EPOLL)
        sleep_in_epoll();
    else
        sleep_in_futex();
    return NULL;
}

static void pause_ms(int milliseconds)
{
    struct timespec delay = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};

    while (nanosleep(&delay, &delay) != 0 && errno == EINTR)
        ;
}

/* COUNT threads; the first BLOCKED of them block every signal. */
static int start_sleepers(int count, enum sleeper_mode mode, int blocked)
{
    pthread_attr_t attributes;

    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, STACK_SIZE);
    atomic_store(&sleepers.started, 0);
    atomic_store(&sleepers.stop, 0);
    atomic_store(&sleepers.eintr, 0);
    sleepers.count = 0;
    for (int i = 0; i < count; i++) {
        sleepers.modes[i] = i < blocked ? SLEEP_FUTEX_ALL_BLOCKED : mode;
        if (pthread_create(&sleepers.threads[i], &attributes, sleeper_main, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "stop_methods: pthread_create failed after %d threads\n", i);
            break;
        }
        sleepers.count++;
    }
    pthread_attr_destroy(&attributes);
    while (atomic_load(&sleepers.started) < (uint32_t)sleepers.count)
        pause_ms(1);
    pause_ms(20); /* time to reach the blocking call */
    return sleepers.count == count ? 0 : -1;
}

static void stop_sleepers(void)
{
    uint64_t one = 1;

    atomic_store(&sleepers.stop, 1);
    futex_wake(&sleepers.stop, INT_MAX);
    if (write(sleepers.event_fd, &one, sizeof one) < 0)
        perror("stop_methods: eventfd");
    for (int i = 0; i < sleepers.count; i++)
        pthread_join(sleepers.threads[i], NULL);
    if (read(sleepers.event_fd, &one, sizeof one) < 0)
        perror("stop_methods: eventfd");
}

/* ---- the timed table -------------------------------------------------------- */

enum method { METHOD_SIGNAL, METHOD_PTRACE, METHOD_BREAKPAD, METHOD_COUNT };
static const char *const method_names[] = {"a signal", "b ptrace helper", "c breakpad shape"};

static struct round_times run_method(enum method method, uint64_t deadline_ns)
{
    if (method == METHOD_SIGNAL)
        return gather_by_signal(deadline_ns);
    return gather_by_ptrace(method == METHOD_BREAKPAD);
}

struct medians {
    double gathered[METHOD_COUNT], released[METHOD_COUNT], resumed_signal;
    double listing; /* list_threads alone, which every method starts with */
    int incomplete; /* rounds where some thread did not answer */
};

/* R rounds of one contender into the sample arrays at [method][r]. */
static void sample(enum method m, int r, double gathered[][MAX_REPETITIONS],
                   double released[][MAX_REPETITIONS], double *resumed, int *incomplete)
{
    pause_ms(2); /* the threads go back to sleep (or spin) first */
    struct round_times times = run_method(m, BENCH_DEADLINE_NS);
    gathered[m][r] = times.gathered_us;
    released[m][r] = times.released_us;
    if (m == METHOD_SIGNAL)
        resumed[r] = times.resumed_us;
    if (times.answered != times.asked)
        (*incomplete)++;
}

/* a and b alternate, in a rotating order. c runs after them, alone: its
 * helper is a copy of the process, and the copy write-protects every
 * private page, so after each c round the threads' next writes to their
 * stacks fault (copy on write), which would be counted against a and b. */
static struct medians measure(int repetitions)
{
    static double gathered[METHOD_COUNT][MAX_REPETITIONS], released[METHOD_COUNT][MAX_REPETITIONS];
    static double resumed[MAX_REPETITIONS];
    struct medians result = {0};

    run_method(METHOD_SIGNAL, BENCH_DEADLINE_NS); /* warm: first clone, first page faults */
    run_method(METHOD_PTRACE, BENCH_DEADLINE_NS);
    for (int r = 0; r < repetitions; r++) {
        sample(r % 2 ? METHOD_PTRACE : METHOD_SIGNAL, r, gathered, released, resumed, &result.incomplete);
        sample(r % 2 ? METHOD_SIGNAL : METHOD_PTRACE, r, gathered, released, resumed, &result.incomplete);
    }
    run_method(METHOD_BREAKPAD, BENCH_DEADLINE_NS);
    for (int r = 0; r < repetitions; r++)
        sample(METHOD_BREAKPAD, r, gathered, released, resumed, &result.incomplete);
    for (int m = 0; m < METHOD_COUNT; m++) {
        result.gathered[m] = median(gathered[m], (size_t)repetitions);
        result.released[m] = median(released[m], (size_t)repetitions);
    }
    result.resumed_signal = median(resumed, (size_t)repetitions);
    for (int r = 0; r < repetitions; r++) {
        uint64_t start = now_ns();
        list_threads();
        resumed[r] = (double)(now_ns() - start) / 1e3;
    }
    result.listing = median(resumed, (size_t)repetitions);
    return result;
}

static void print_table_header(const char *title)
{
    printf("\n%s\n\n", title);
    printf("| threads | they | a gathered | b gathered | c gathered | b/a | c/a "
           "| a released | b released | c released | b/a | c/a | a resumed | listing |\n");
    printf("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
}

static void print_row(int threads, enum sleeper_mode mode, const struct medians *m)
{
    printf("| %d | %s | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f |%s\n",
           threads, mode_names[mode], m->gathered[0], m->gathered[1], m->gathered[2],
           m->gathered[1] / m->gathered[0], m->gathered[2] / m->gathered[0], m->released[0],
           m->released[1], m->released[2], m->released[1] / m->released[0],
           m->released[2] / m->released[0], m->resumed_signal, m->listing,
           m->incomplete ? " (some rounds incomplete)" : "");
    fflush(stdout);
}

static int run_table(const int *counts, int count_count, const bool *modes, int repetitions)
{
    for (int mode = 0; mode <= SLEEP_SPIN; mode++) {
        if (!modes[mode])
            continue;
        for (int i = 0; i < count_count; i++) {
            if (mode == SLEEP_SPIN && counts[i] > MAX_SPINNING)
                continue;
            if (start_sleepers(counts[i], (enum sleeper_mode)mode, 0) != 0)
                return -1;
            struct medians m = measure(repetitions);
            stop_sleepers();
            print_row(counts[i], (enum sleeper_mode)mode, &m);
        }
    }
    return 0;
}

/* ---- observations ----------------------------------------------------------- */

static const char *error_name(int error)
{
    return error == 0 ? "none" : error == -EPERM ? "EPERM" : error == -ESRCH ? "ESRCH" : strerror(-error);
}

static void print_observation(const char *what, enum method method, struct round_times t)
{
    printf("- %s, %s: %d of %d threads read in %.0f us%s%s\n", what, method_names[method],
           t.answered, t.asked, t.gathered_us, t.first_error ? "; first error " : "",
           t.first_error ? error_name(t.first_error) : "");
}

static void observe_blocked(void)
{
    start_sleepers(16, SLEEP_FUTEX, 1);
    for (int m = 0; m < METHOD_COUNT; m++)
        print_observation("16 sleeping threads, 1 of them blocking every signal (deadline 200 ms)",
                          (enum method)m, run_method((enum method)m, OBSERVE_DEADLINE_NS));
    stop_sleepers();
}

/* How many of 16 threads' blocking calls come back with EINTR after one
 * round of each method (SA_RESTART is set on the handler). */
static void observe_eintr(void)
{
    for (enum sleeper_mode mode = SLEEP_FUTEX; mode <= SLEEP_EPOLL; mode++) {
        if (mode == SLEEP_SPIN)
            continue;
        start_sleepers(16, mode, 0);
        for (int m = 0; m < METHOD_COUNT; m++) {
            atomic_store(&sleepers.eintr, 0);
            run_method((enum method)m, OBSERVE_DEADLINE_NS);
            pause_ms(50);
            printf("- 16 threads in %s, %s: %d of them returned EINTR\n",
                   mode == SLEEP_EPOLL ? "epoll_wait (no timeout)" : "FUTEX_WAIT (no timeout)",
                   method_names[m], atomic_load(&sleepers.eintr));
        }
        stop_sleepers();
    }
}

static int deny_ptrace_by_seccomp(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof filter / sizeof filter[0], .filter = filter};

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

/* In a child process, so that the filter stays there. The architecture
 * check a real filter starts with is left out: x86-64 only. */
static void observe_seccomp(void)
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        process_id = getpid();
        if (deny_ptrace_by_seccomp() != 0)
            perror("stop_methods: seccomp");
        start_sleepers(16, SLEEP_FUTEX, 0);
        for (int m = 0; m < METHOD_COUNT; m++)
            print_observation("16 sleeping threads, seccomp filter: ptrace -> EPERM", (enum method)m,
                              run_method((enum method)m, OBSERVE_DEADLINE_NS));
        stop_sleepers();
        fflush(stdout);
        _exit(0);
    }
    waitpid(child, NULL, 0);
}

/* The tracer's side: seize every thread of CHILD but its main one, keep
 * the first of them in a ptrace-stop, and pass every signal on, as strace
 * does (gdb's defaults would stop at each real-time signal instead). */
static void trace_like_a_debugger(pid_t child, int to_child, int from_child)
{
    char task_path[64], byte;
    pid_t tids[64];
    int count = 0, kept = 0;

    snprintf(task_path, sizeof task_path, "/proc/%d/task", child);
    if (read(from_child, &byte, 1) != 1)
        return;
    int fd = open(task_path, O_RDONLY | O_DIRECTORY);
    char buffer[4096] __attribute__((aligned(8)));
    long length;
    while (fd >= 0 && (length = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0)
        for (long at = 0; at < length; at += ((struct dirent64_raw *)(buffer + at))->length) {
            pid_t tid = parse_tid(((struct dirent64_raw *)(buffer + at))->name);
            if (tid > 0 && tid != child && count < 64)
                tids[count++] = tid;
        }
    close(fd);
    for (int i = 0; i < count; i++)
        ptrace(PTRACE_SEIZE, tids[i], NULL, NULL);
    ptrace(PTRACE_INTERRUPT, tids[0], NULL, NULL);
    if (write(to_child, "t", 1) != 1)
        return;
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL);
        if (tid < 0)
            break;
        if (!WIFSTOPPED(status))
            continue;
        if (tid == tids[0] && !kept++)
            continue; /* the thread a debugger holds stopped */
        int event_stop = status >> 16 == PTRACE_EVENT_STOP;
        ptrace(PTRACE_CONT, tid, NULL, (void *)(intptr_t)(event_stop ? 0 : WSTOPSIG(status)));
    }
}

static void observe_traced(void)
{
    int down[2], up[2];

    if (pipe(down) != 0 || pipe(up) != 0)
        return;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        char byte;
        process_id = getpid();
        start_sleepers(16, SLEEP_FUTEX, 0);
        if (write(up[1], "r", 1) != 1 || read(down[0], &byte, 1) != 1)
            _exit(1);
        pause_ms(50);
        for (int m = 0; m < METHOD_COUNT; m++)
            print_observation("16 sleeping threads, all traced by another process, 1 held stopped by it",
                              (enum method)m, run_method((enum method)m, OBSERVE_DEADLINE_NS));
        fflush(stdout);
        _exit(0); /* the threads are not joined: one is held stopped */
    }
    trace_like_a_debugger(child, down[1], up[0]);
}

static void print_environment(void)
{
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");

    printf("ptrace_scope: ");
    FILE *scope = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (scope && fgets(line, sizeof line, scope))
        printf("%s", line);
    else
        printf("no /proc/sys/kernel/yama/ptrace_scope (Yama not in this kernel)\n");
    if (scope)
        fclose(scope);
    while (status && fgets(line, sizeof line, status))
        if (!strncmp(line, "Seccomp:", 8) || !strncmp(line, "CapEff:", 7))
            printf("%s", line);
    if (status)
        fclose(status);
    errno = 0;
    int result = prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    printf("prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY): %d%s%s\n", result, result ? " " : "",
           result ? strerror(errno) : "");
}

/* ---- main ------------------------------------------------------------------- */

static int parse_counts(const char *text, int *counts)
{
    int count = 0;

    for (char *end; *text && count < 8; text = *end ? end + 1 : end) {
        long value = strtol(text, &end, 10);
        if (value < 1 || value > MAX_THREADS - 1)
            return -1;
        counts[count++] = (int)value;
    }
    return count;
}

static int pin_to_one_cpu(cpu_set_t *allowed)
{
    const char *chosen = getenv("BENCH_CPU");
    int cpu = -1;
    cpu_set_t one;

    for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
        if (CPU_ISSET(i, allowed))
            cpu = i;
    if (chosen)
        cpu = atoi(chosen);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return -1;
    return cpu;
}

int main(int argc, char **argv)
{
    int counts[8] = {1, 16, 256, 1000}, count_count = 4, repetitions = 21, option;
    bool modes[2] = {true, true}, pinned = true, unpinned = true, observe = true;
    cpu_set_t allowed;

    while ((option = getopt(argc, argv, "r:n:m:p:O")) != -1) {
        if (option == 'r')
            repetitions = atoi(optarg) < 1 ? 1 : atoi(optarg) > MAX_REPETITIONS ? MAX_REPETITIONS : atoi(optarg);
        else if (option == 'n' && (count_count = parse_counts(optarg, counts)) < 1)
            return fprintf(stderr, "stop_methods: -n takes thread counts, 1 to %d\n", MAX_THREADS - 1), 2;
        else if (option == 'm')
            modes[0] = strstr(optarg, "sleep") != NULL, modes[1] = strstr(optarg, "spin") != NULL;
        else if (option == 'p')
            pinned = strcmp(optarg, "off") != 0, unpinned = strcmp(optarg, "on") != 0;
        else if (option == 'O')
            observe = false;
        else if (option != 'n')
            return fprintf(stderr, "usage: %s [-r reps] [-n 1,16,256,1000] [-m sleep,spin] [-p both|on|off] [-O]\n", argv[0]), 2;
    }
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return perror("stop_methods: mmap"), 1;
    process_id = getpid();
    sleepers.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    sleepers.event_fd = eventfd(0, EFD_CLOEXEC);
    struct epoll_event wake = {.events = EPOLLIN};
    epoll_ctl(sleepers.epoll_fd, EPOLL_CTL_ADD, sleepers.event_fd, &wake);
    install_answer_handler();
    sched_getaffinity(0, sizeof allowed, &allowed);

    printf("stop_methods: medians of %d repetitions in microseconds; signal %d (SIGRTMAX-3); "
           "%d KiB thread stacks\n", repetitions, ANSWER_SIGNAL, STACK_SIZE / 1024);
    print_environment();
    if (pinned) {
        int cpu = pin_to_one_cpu(&allowed);
        char title[96];
        snprintf(title, sizeof title, "Pinned: the process and every thread on CPU %d", cpu);
        print_table_header(title);
        if (cpu < 0 || run_table(counts, count_count, modes, repetitions) != 0)
            return 1;
        sched_setaffinity(0, sizeof allowed, &allowed);
    }
    if (unpinned) {
        print_table_header("Unpinned: every CPU allowed");
        if (run_table(counts, count_count, modes, repetitions) != 0)
            return 1;
    }
    if (observe) {
        printf("\nObservations (unpinned)\n\n");
        observe_blocked();
        observe_eintr();
        observe_seccomp();
        observe_traced();
    }
    return 0;
}
