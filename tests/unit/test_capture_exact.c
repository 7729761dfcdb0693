/* A differential test of capture exactness (issue 14): thousands of
 * captures by backtrace_skip_range(buffer, 16, start, end, memo) with a
 * per-thread memo, and by backtrace_from_caller(buffer, 16, caller, memo)
 * from what an entry point saw of its caller (as the hooks library's
 * malloc does), from random call paths, each compared with two full
 * walks of the same moment, taken at the same point of the same frame:
 * backtrace_skip_range without a memo, and libunwind's unw_backtrace. Cases:
 * random paths; longjmp out of a deep path, then a capture from a
 * shallower one; swapcontext between two stacks that share one memo; a C++
 * exception thrown through C++ and C frames, caught, then a capture;
 * SIGALRM at random points (setitimer) whose handler captures, often in
 * the middle of a capture; threads, each with its own memo; fork, then
 * captures in the child with the memo it inherited. At every moment
 * backtrace() and backtrace_ucontext() (from getcontext) are compared
 * too: they walk with the calling thread's default memo (thread_memo.c),
 * which a handler that interrupts one of them finds busy, and which more
 * threads than it has slots share. Each case logs how many captures it
 * compared and asserts that none differed; a difference is logged with
 * the traces. No timing is asserted.
 *
 * The capture happens in functions of a section of their own
 * (exact_capture), whose bounds are the range to skip: as the hooks
 * library skips its own text, so that the first frame kept is the caller's,
 * the same for all three walks. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>

#include "support.h"
#include "test_asm.h"
#include "base/caller_entry.h"

#define FRAMES 16
#define UNW_EXTRA 8      /* frames inside the section that libunwind also sees */
#define MAX_DEPTH 22

extern const char __start_exact_capture[], __stop_exact_capture[];

/* The counts are the test's output: shown without --verbose. */
ReportHook(PRE_ALL)(struct criterion_test_set *tests)
{
    (void)tests;
    if (criterion_options.logging_threshold > CRITERION_INFO)
        criterion_options.logging_threshold = CRITERION_INFO;
}

/* ---- the three walks and their comparison -------------------------------- */

struct walks {
    void *memo[FRAMES], *entry[FRAMES], *full[FRAMES], *unw[FRAMES];
    void *plain[FRAMES], *context[FRAMES];   /* backtrace(), backtrace_ucontext() */
    int memo_count, entry_count, full_count, unw_count, plain_count, context_count;
};

/* What a case counts. Atomics: threads and signal handlers add to them. */
struct tally {
    atomic_long compared, mismatched;
    atomic_int recorded;         /* the first mismatch is kept in "first" */
    struct walks first;
    char where[64];
};

#define IN_CAPTURE_SECTION __attribute__((noinline, section("exact_capture")))

/* The COUNT frames of RAW without the innermost ones inside the section,
 * as the range skip drops them, into OUT (FRAMES at most). */
static int keep_outside(void *const *raw, int count, void **out)
{
    int first = 0, kept = 0;
    while (first < count && (const char *)raw[first] >= __start_exact_capture &&
           (const char *)raw[first] < __stop_exact_capture)
        first++;
    for (int i = first; i < count && kept < FRAMES; i++)
        out[kept++] = raw[i];
    return kept;
}

/* libunwind's walk without its frames inside the section. */
IN_CAPTURE_SECTION static int unwind_outside(void **out)
{
    void *raw[FRAMES + UNW_EXTRA];
    int count = unw_backtrace(raw, FRAMES + UNW_EXTRA);
    return keep_outside(raw, count, out);
}

/* backtrace(), with the thread's default memo, the same way. */
IN_CAPTURE_SECTION static int plain_outside(void **out)
{
    void *raw[FRAMES + UNW_EXTRA];
    int count = backtrace(raw, FRAMES + UNW_EXTRA);
    __asm__ volatile("" ::: "memory");
    return keep_outside(raw, count, out);
}

/* backtrace_ucontext() of this frame's own context (its frame 0, the pc
 * after getcontext, is in the section), with the default memo too. */
IN_CAPTURE_SECTION static int context_outside(void **out)
{
    ucontext_t context;
    void *raw[FRAMES + UNW_EXTRA];
    if (getcontext(&context) != 0)
        return -1;
    int count = backtrace_ucontext(raw, FRAMES + UNW_EXTRA, &context);
    __asm__ volatile("" ::: "memory");
    return keep_outside(raw, count, out);
}

/* BLOCK_SIGNALS: libunwind's walk is not written to be interrupted by
 * another of its walks (a signal handler's); ours are, so only its part is
 * shielded. CALLER: what walk_four's entry saw of its caller, the first
 * frame outside the section. */
__attribute__((noinline, used, section("exact_capture"))) void
walk_four_entered(struct walks *walks, struct backtrace_memo *memo, int block_signals,
                  const struct backtrace_caller *caller)
{
    walks->entry_count = backtrace_from_caller(walks->entry, FRAMES, caller, memo);
    walks->memo_count = backtrace_skip_range(walks->memo, FRAMES, __start_exact_capture,
                                             __stop_exact_capture, memo);
    walks->full_count = backtrace_skip_range(walks->full, FRAMES, __start_exact_capture,
                                             __stop_exact_capture, NULL);
    walks->plain_count = plain_outside(walks->plain);
    walks->context_count = context_outside(walks->context);
    sigset_t all, old;
    if (block_signals) {
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
    }
    walks->unw_count = unwind_outside(walks->unw);
    if (block_signals)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    __asm__ volatile("" ::: "memory");
}

/* The four walks of this moment: an entry point in the section, as the
 * hooks library's malloc is in its library. */
void walk_four(struct walks *walks, struct backtrace_memo *memo, int block_signals);

static int same_walk(void *const *a, int a_count, void *const *b, int b_count)
{
    if (a_count != b_count)
        return 0;
    for (int i = 0; i < a_count; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* libunwind's return addresses may be ours minus 1 (test_asm.h). */
static int same_walk_as_libunwind(void *const *ours, int our_count, void *const *theirs,
                                  int their_count)
{
    their_count = test_libunwind_count(theirs, their_count);
    if (our_count != their_count)
        return 0;
    for (int i = 0; i < our_count; i++)
        if (!test_same_as_libunwind(ours[i], theirs[i]))
            return 0;
    return 1;
}

/* Async-signal-safe: atomics and a copy. */
static void judge(struct tally *tally, const struct walks *walks, const char *where)
{
    int good = walks->memo_count > 0 &&
               same_walk(walks->memo, walks->memo_count, walks->full, walks->full_count) &&
               same_walk(walks->entry, walks->entry_count, walks->full, walks->full_count) &&
               same_walk(walks->plain, walks->plain_count, walks->full, walks->full_count) &&
               same_walk(walks->context, walks->context_count, walks->full, walks->full_count) &&
               same_walk_as_libunwind(walks->full, walks->full_count, walks->unw, walks->unw_count);
    atomic_fetch_add(&tally->compared, 1);
    if (good)
        return;
    atomic_fetch_add(&tally->mismatched, 1);
    if (atomic_exchange(&tally->recorded, 1) == 0) {
        tally->first = *walks;
        size_t n = strlen(where) < sizeof tally->where - 1 ? strlen(where) : sizeof tally->where - 1;
        memcpy(tally->where, where, n);
        tally->where[n] = '\0';
    }
}

static void log_walk(const char *name, void *const *frames, int count)
{
    cr_log_error("  %s: %d frames", name, count);
    for (int i = 0; i < count; i++) {
        Dl_info info = { 0 };
        int known = dladdr(frames[i], &info) != 0;
        const char *symbol = known && info.dli_sname ? info.dli_sname : "?";
        uintptr_t offset = known ? (uintptr_t)frames[i] - (uintptr_t)info.dli_fbase : 0;
        cr_log_error("    #%d %p %s (%s+%#lx)", i, frames[i], symbol,
                     known ? info.dli_fname : "?", (unsigned long)offset);
    }
}

static void report(const char *test_case, struct tally *tally)
{
    long compared = atomic_load(&tally->compared), mismatched = atomic_load(&tally->mismatched);
    cr_log_info("capture exactness, %s: %ld captures compared (memo, from the caller, "
                "backtrace, backtrace_ucontext, no memo, unw_backtrace), "
                "%ld mismatched", test_case, compared, mismatched);
    if (mismatched > 0) {
        cr_log_error("first mismatch, %s, at %s:", test_case, tally->where);
        log_walk("with the memo", tally->first.memo, tally->first.memo_count);
        log_walk("from the caller", tally->first.entry, tally->first.entry_count);
        log_walk("backtrace", tally->first.plain, tally->first.plain_count);
        log_walk("backtrace_ucontext", tally->first.context, tally->first.context_count);
        log_walk("without a memo", tally->first.full, tally->first.full_count);
        log_walk("unw_backtrace", tally->first.unw, tally->first.unw_count);
    }
    cr_assert_eq(mismatched, 0, "%s: %ld of %ld captures differ from a full walk", test_case,
                 mismatched, compared);
}

/* ---- random call paths ------------------------------------------------------ */

/* One walker's state: its generator, its memo, what it does at the leaf. */
struct path_context {
    uint64_t random;
    struct backtrace_memo *memo;
    struct tally *tally;
    const char *where;
    int block_signals;
    void (*at_leaf)(struct path_context *context, int depth);
    jmp_buf *jump;               /* longjmp case: where the leaf jumps to */
    int jump_depth;              /* the depth of the level that set it */
};

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static unsigned pick(struct path_context *context, unsigned bound)
{
    return (unsigned)(next_random(&context->random) >> 33) % bound;
}

__attribute__((noinline)) static void capture_here(struct path_context *context)
{
    struct walks walks;
    walk_four(&walks, context->memo, context->block_signals);
    judge(context->tally, &walks, context->where);
    __asm__ volatile("" ::: "memory");
}

typedef void path_fn(struct path_context *context, int depth);
static path_fn *pick_level(struct path_context *context);

/* Four functions of the same shape: their frames have the same size, so a
 * path through one lays the same stack pointers as a path through
 * another, with other return addresses (the case a reuse of the last walk
 * must not be fooled by). Sometimes a level captures before and after its
 * callee, so that a capture follows a deeper one. */
#define SAME_SHAPE_LEVEL(name)                                                        \
    __attribute__((noinline)) static void name(struct path_context *context, int depth) \
    {                                                                                 \
        if (depth <= 0) {                                                             \
            context->at_leaf(context, depth);                                         \
            return;                                                                   \
        }                                                                             \
        int around = pick(context, 8) == 0;                                           \
        if (around)                                                                   \
            capture_here(context);                                                    \
        pick_level(context)(context, depth - 1);                                      \
        if (around)                                                                   \
            capture_here(context);                                                    \
        __asm__ volatile("" ::: "memory");                                            \
    }
SAME_SHAPE_LEVEL(level_a)
SAME_SHAPE_LEVEL(level_b)
SAME_SHAPE_LEVEL(level_c)
SAME_SHAPE_LEVEL(level_d)

/* Two call sites of one callee at one stack pointer. */
__attribute__((noinline)) static void level_two_sites(struct path_context *context, int depth)
{
    if (depth <= 0) {
        context->at_leaf(context, depth);
        return;
    }
    if (pick(context, 2))
        pick_level(context)(context, depth - 1);
    else
        pick_level(context)(context, depth - 1);
    __asm__ volatile("" ::: "memory");
}

/* A frame of a size chosen at run time (the CFA is then rbp-based). */
__attribute__((noinline)) static void level_alloca(struct path_context *context, int depth)
{
    size_t size = 16 + 16 * pick(context, 64);
    volatile char *room = __builtin_alloca(size);
    room[0] = 1;
    room[size - 1] = 2;
    if (depth <= 0)
        context->at_leaf(context, depth);
    else
        pick_level(context)(context, depth - 1);
    __asm__ volatile("" : : "r"(room) : "memory");
}

/* A realigned frame: the saved rsp is not the CFA minus a constant. */
__attribute__((noinline)) static void level_realigned(struct path_context *context, int depth)
{
    char buffer[96] __attribute__((aligned(64)));
    memset(buffer, depth, sizeof buffer);
    __asm__ volatile("" : : "r"(buffer) : "memory");
    if (depth <= 0)
        context->at_leaf(context, depth);
    else
        pick_level(context)(context, depth - 1);
    __asm__ volatile("" : : "r"(buffer) : "memory");
}

/* Callee-saved registers live across the call, pushed in the prologue. */
__attribute__((noinline)) static void level_registers(struct path_context *context, int depth)
{
    uint64_t a = next_random(&context->random), b = a * 3, c = a ^ 0x55, d = a + 7, e = a >> 3;
    __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
    if (depth <= 0)
        context->at_leaf(context, depth);
    else
        pick_level(context)(context, depth - 1);
    __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d), "r"(e) : "memory");
}

static path_fn *const levels[] = {
    level_a, level_b, level_c, level_d, level_two_sites, level_alloca, level_realigned,
    level_registers,
};

static path_fn *pick_level(struct path_context *context)
{
    return levels[pick(context, sizeof levels / sizeof levels[0])];
}

static void capture_at_leaf(struct path_context *context, int depth)
{
    (void)depth;
    capture_here(context);
    if (pick(context, 4) == 0)
        capture_here(context); /* the same moment again: all predicted */
}

/* One random path from here, of a random depth, captures on the way. */
__attribute__((noinline)) static void random_path(struct path_context *context)
{
    pick_level(context)(context, (int)pick(context, MAX_DEPTH + 1));
    __asm__ volatile("" ::: "memory");
}

static void init_context(struct path_context *context, uint64_t seed, struct backtrace_memo *memo,
                         struct tally *tally, const char *where)
{
    *context = (struct path_context){ .random = seed | 1, .memo = memo, .tally = tally,
                                      .where = where, .at_leaf = capture_at_leaf };
}

static __thread struct backtrace_memo thread_memo;

Test(capture_exact, random_paths)
{
    static struct tally tally;
    struct path_context context;
    init_context(&context, 0x9e3779b97f4a7c15u, &thread_memo, &tally, "random path");
    while (atomic_load(&tally.compared) < 6000)
        random_path(&context);
    report("random paths", &tally);
}

/* The same with a memo of 16 structs (backtrace_memo_init; the heap
 * layer keeps 4): 4,096 rules instead of 255. */
static struct backtrace_memo large_memo[16];

Test(capture_exact, random_paths_with_a_large_memo)
{
    static struct tally tally;
    struct path_context context;
    cr_assert_eq(backtrace_memo_init(large_memo, 16), 0);
    init_context(&context, 0x7f4a7c159e3779b9u, large_memo, &tally, "random path, large memo");
    while (atomic_load(&tally.compared) < 6000)
        random_path(&context);
    report("random paths, large memo", &tally);
}

/* ---- longjmp ------------------------------------------------------------------ */

/* The leaf jumps out to a shallower level, which captures (on stack the
 * deep path's frames held) and sets out on a new path. */
static long jumps;

static void jump_at_leaf(struct path_context *context, int depth)
{
    (void)depth;
    capture_here(context);
    if (context->jump != NULL) {
        jumps++;
        longjmp(*context->jump, 1);
    }
}

__attribute__((noinline)) static void level_setjmp(struct path_context *context, int depth)
{
    jmp_buf here;
    jmp_buf *volatile outer = context->jump;
    volatile int rounds = 0;

    context->jump = &here;
    if (setjmp(here) != 0) {
        capture_here(context);
        if (++rounds > 3) {
            context->jump = outer;
            return;
        }
    }
    pick_level(context)(context, depth > 0 ? (int)pick(context, (unsigned)depth + 1) : 0);
    context->jump = outer;
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void jump_path(struct path_context *context, int depth)
{
    if (depth <= 0 || pick(context, 3) == 0) {
        level_setjmp(context, MAX_DEPTH - depth);
        return;
    }
    if (pick(context, 2))
        jump_path(context, depth - 1);
    else
        pick_level(context)(context, 0); /* a plain capture on the way */
    __asm__ volatile("" ::: "memory");
}

Test(capture_exact, longjmp_out_of_a_deep_path)
{
    static struct tally tally;
    struct path_context context;
    init_context(&context, 0x1234567887654321u, &thread_memo, &tally, "longjmp");
    context.at_leaf = jump_at_leaf;
    while (atomic_load(&tally.compared) < 4000)
        jump_path(&context, (int)pick(&context, 10));
    cr_log_info("capture exactness, longjmp: %ld jumps out of a path", jumps);
    cr_assert_gt(jumps, 100);
    report("longjmp out of a deep path", &tally);
}

/* ---- swapcontext ---------------------------------------------------------------- */

#define FIBER_STACK (256 * 1024)

static ucontext_t main_context, fiber_context[2];
static struct path_context fiber_path[2];
static int fiber_done[2];
static int current_fiber;
static long switches;

/* At a leaf, now and then: switch to the other stack, from deep inside
 * this one; the capture after the switch back uses the memo the other
 * stack's walks left. */
static void swap_at_leaf(struct path_context *context, int depth)
{
    (void)depth;
    capture_here(context);
    if (pick(context, 3) == 0) {
        int self = current_fiber, other = !self;
        if (!fiber_done[other]) {
            current_fiber = other;
            switches++;
            swapcontext(&fiber_context[self], &fiber_context[other]);
            current_fiber = self;
        }
        capture_here(context);
    }
}

static void fiber_main(int which)
{
    while (atomic_load(&fiber_path[which].tally->compared) < 4000)
        random_path(&fiber_path[which]);
    fiber_done[which] = 1;
    /* Leave through the other fiber if it still runs, else to main. */
    if (!fiber_done[!which]) {
        current_fiber = !which;
        swapcontext(&fiber_context[which], &fiber_context[!which]);
    }
}

static void prepare_fiber(int i, struct tally *tally)
{
    void *stack = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    cr_assert_neq(stack, MAP_FAILED);
    cr_assert_eq(getcontext(&fiber_context[i]), 0);
    fiber_context[i].uc_stack.ss_sp = stack;
    fiber_context[i].uc_stack.ss_size = FIBER_STACK;
    fiber_context[i].uc_link = &main_context;
    makecontext(&fiber_context[i], (void (*)(void))fiber_main, 1, i);
    /* Both on the one memo of this thread. */
    init_context(&fiber_path[i], 0xabcdef12345u * (uint64_t)(i + 1), &thread_memo, tally,
                 i ? "fiber 1" : "fiber 0");
    fiber_path[i].at_leaf = swap_at_leaf;
}

Test(capture_exact, swapcontext_between_two_stacks)
{
    static struct tally tally;
    prepare_fiber(0, &tally);
    prepare_fiber(1, &tally);
    current_fiber = 0;
    cr_assert_eq(swapcontext(&main_context, &fiber_context[0]), 0);
    /* Back on the thread's own stack, after both fibers' walks. */
    struct path_context context;
    init_context(&context, 77, &thread_memo, &tally, "after the fibers");
    for (int i = 0; i < 200; i++)
        random_path(&context);
    cr_assert(fiber_done[0] && fiber_done[1]);
    cr_log_info("capture exactness, swapcontext: %ld switches from deep inside a path", switches);
    cr_assert_gt(switches, 100);
    report("swapcontext between two stacks", &tally);
}

/* ---- a C++ exception ------------------------------------------------------------ */

typedef void cxx_throw_now_fn(void);
typedef int cxx_throw_through_fn(int depth, void (*deep)(void *), void (*after)(void *),
                                 void *argument);
static cxx_throw_now_fn *cxx_throw_now;

/* At the C leaf under the C++ frames: throw from here, through the C
 * frames of the path, half of the time. */
static void throw_at_leaf(struct path_context *context, int depth)
{
    (void)depth;
    capture_here(context);
    if (pick(context, 2))
        cxx_throw_now();
}

static void deep_in_cxx(void *argument)
{
    random_path(argument);
}

static void after_the_catch(void *argument)
{
    struct path_context *context = argument;
    capture_here(context); /* on stack the thrown-through frames held */
    context->at_leaf = capture_at_leaf; /* nothing catches here */
    random_path(context);
    context->at_leaf = throw_at_leaf;
}

Test(capture_exact, cxx_exception_thrown_through_frames)
{
    static struct tally tally;
    const char *directory = getenv("EXECINFO_EX_TESTS");
    char path[4096];
    snprintf(path, sizeof path, "%s/cxx_throw.so", directory != NULL ? directory : "build/tests");
    void *fixture = dlopen(path, RTLD_NOW);
    cr_assert_not_null(fixture, "dlopen %s: %s", path, dlerror());
    cxx_throw_now = (cxx_throw_now_fn *)dlsym(fixture, "cxx_throw_now");
    cxx_throw_through_fn *throw_through = (cxx_throw_through_fn *)dlsym(fixture, "cxx_throw_through");
    cr_assert(cxx_throw_now != NULL && throw_through != NULL);

    struct path_context context;
    init_context(&context, 0x5eed5eed5eedu, &thread_memo, &tally, "C++ exception");
    context.at_leaf = throw_at_leaf;
    long caught = 0;
    while (atomic_load(&tally.compared) < 3000) {
        int depth = (int)pick(&context, 6);
        int destroyed = throw_through(depth, deep_in_cxx, after_the_catch, &context);
        cr_assert_geq(destroyed, 1, "the exception was not caught, or ran no cleanup");
        caught++;
    }
    cr_log_info("capture exactness, C++ exception: %ld exceptions caught", caught);
    report("C++ exception thrown through frames", &tally);
}

/* ---- signal handlers that interrupt captures -------------------------------------- */

static struct tally signal_tally;
static __thread struct backtrace_memo handler_memo;
static struct path_context handler_path;
static volatile sig_atomic_t in_main_capture;
static atomic_long interrupted_captures, handler_runs;

/* The main line's leaf marks its captures, so that the handler knows it
 * interrupted one. */
static volatile sig_atomic_t alarms_wanted;
static uint64_t alarm_random = 99;

/* One SIGALRM, 5 to 104 us from now (setitimer is async-signal-safe). */
static void arm_random_alarm(void)
{
    if (!alarms_wanted)
        return;
    struct itimerval timer = {
        .it_value = { .tv_usec = 5 + (long)(next_random(&alarm_random) % 100) },
    };
    setitimer(ITIMER_REAL, &timer, NULL);
}

static void marked_capture_at_leaf(struct path_context *context, int depth)
{
    (void)depth;
    in_main_capture = 1;
    capture_here(context);
    in_main_capture = 0;
}

/* The handler walks a short random path of its own and captures with a
 * memo of its own (a memo is for one capture at a time). */
static void on_alarm(int signo)
{
    int saved_errno = errno;
    (void)signo;
    atomic_fetch_add(&handler_runs, 1);
    if (in_main_capture)
        atomic_fetch_add(&interrupted_captures, 1);
    pick_level(&handler_path)(&handler_path, (int)pick(&handler_path, 8));
    arm_random_alarm(); /* the next one, at another random point */
    errno = saved_errno;
}

Test(capture_exact, signal_handlers_that_interrupt_captures)
{
    static struct tally tally;
    struct path_context context;
    init_context(&context, 0xfeedfacecafef00du, &thread_memo, &tally, "main line");
    context.at_leaf = marked_capture_at_leaf;
    context.block_signals = 1;
    init_context(&handler_path, 0x0ddba11u, &handler_memo, &signal_tally, "signal handler");
    struct sigaction action = { .sa_handler = on_alarm };
    sigemptyset(&action.sa_mask);
    cr_assert_eq(sigaction(SIGALRM, &action, NULL), 0);
    alarms_wanted = 1;
    arm_random_alarm();
    while (atomic_load(&tally.compared) < 4000 || atomic_load(&signal_tally.compared) < 2000) {
        random_path(&context);
        if (atomic_load(&tally.compared) > 300000)
            break;
    }
    alarms_wanted = 0;
    struct itimerval off = { 0 };
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    cr_log_info("capture exactness, signals: %ld handler runs, %ld of them inside a capture",
                atomic_load(&handler_runs), atomic_load(&interrupted_captures));
    report("main line under SIGALRM", &tally);
    report("inside SIGALRM handlers", &signal_tally);
    cr_assert_gt(atomic_load(&interrupted_captures), 0, "no signal landed inside a capture");
}

/* ---- threads ------------------------------------------------------------------------ */

#define THREADS 4

static void *thread_walks(void *argument)
{
    struct tally *tally = argument;
    struct path_context context;
    static atomic_uint seeds = 1;
    init_context(&context, 0x243f6a8885a308d3u * atomic_fetch_add(&seeds, 1), &thread_memo,
                 tally, "thread");
    for (int i = 0; i < 600; i++)
        random_path(&context);
    return NULL;
}

Test(capture_exact, threads_each_with_its_own_memo)
{
    static struct tally tally;
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, thread_walks, &tally), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    cr_assert_gt(atomic_load(&tally.compared), 2000);
    report("threads, each with its own memo", &tally);
}

/* More threads alive at once than the default memo has slots (256, in
 * thread_memo.c), twice: the first wave claims every slot and shares some;
 * the second finds them all owned by exited threads and takes them over.
 * A slot shared by two threads is used by one capture at a time. */
#define MANY_THREADS 300

static pthread_barrier_t many_barrier;

static void *many_thread_walks(void *argument)
{
    struct tally *tally = argument;
    static atomic_uint seeds = 1;
    struct path_context context;
    init_context(&context, 0x452821e638d01377u * atomic_fetch_add(&seeds, 1), &thread_memo,
                 tally, "one of many threads");
    pthread_barrier_wait(&many_barrier); /* all alive: every slot taken */
    for (int i = 0; i < 4; i++)
        random_path(&context);
    return NULL;
}

Test(capture_exact, more_threads_than_default_memo_slots, .timeout = 120)
{
    static struct tally tally;
    static pthread_t threads[MANY_THREADS];
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 512 * 1024);
    for (int wave = 0; wave < 2; wave++) {
        pthread_barrier_init(&many_barrier, NULL, MANY_THREADS);
        for (int i = 0; i < MANY_THREADS; i++)
            cr_assert_eq(pthread_create(&threads[i], &attributes, many_thread_walks, &tally), 0);
        for (int i = 0; i < MANY_THREADS; i++)
            pthread_join(threads[i], NULL);
        pthread_barrier_destroy(&many_barrier);
    }
    pthread_attr_destroy(&attributes);
    cr_assert_gt(atomic_load(&tally.compared), 2 * MANY_THREADS);
    report("more threads than the default memo's slots", &tally);
}

/* ---- fork ------------------------------------------------------------------------------- */

struct child_counts {
    long compared, mismatched;
    struct walks first;
};

Test(capture_exact, fork_then_capture_in_the_child)
{
    static struct tally tally;
    struct path_context context;
    long child_compared = 0, child_mismatched = 0;
    init_context(&context, 0xc0ffee, &thread_memo, &tally, "parent");
    for (int round = 0; round < 16; round++) {
        for (int i = 0; i < 20; i++)
            random_path(&context);
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            /* The memo of the parent's last walk, on a copy of its stack. */
            static struct tally child_tally;
            struct path_context child = context;
            child.tally = &child_tally;
            child.where = "child";
            capture_here(&child);
            for (int i = 0; i < 40; i++)
                random_path(&child);
            struct child_counts counts = { atomic_load(&child_tally.compared),
                                           atomic_load(&child_tally.mismatched),
                                           child_tally.first };
            ssize_t written = write(fds[1], &counts, sizeof counts);
            _exit(written == (ssize_t)sizeof counts ? 0 : 1);
        }
        close(fds[1]);
        struct child_counts counts;
        ssize_t got = read(fds[0], &counts, sizeof counts);
        close(fds[0]);
        int status;
        waitpid(pid, &status, 0);
        cr_assert(got == (ssize_t)sizeof counts && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "round %d: the child failed (status %#x)", round, status);
        child_compared += counts.compared;
        child_mismatched += counts.mismatched;
        if (counts.mismatched > 0 && atomic_exchange(&tally.recorded, 1) == 0) {
            tally.first = counts.first;
            strcpy(tally.where, "child");
        }
        capture_here(&context); /* the parent goes on with its memo */
    }
    atomic_fetch_add(&tally.compared, child_compared);
    atomic_fetch_add(&tally.mismatched, child_mismatched);
    cr_log_info("capture exactness, fork: %ld of the captures were the children's",
                child_compared);
    report("fork, then captures in the child", &tally);
}

/* walk_four's assembly, at the end of the file: GCC's debug line views
 * break on a section switch between two functions. */
CALLER_ENTRY_IN("exact_capture,\"ax\",@progbits", walk_four, walk_four_entered, 3);
