/* backtrace, backtrace_symbols, backtrace_symbols_fd: glibc's contract and
 * glibc's output, plus names for static functions. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo_ex.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>

#include "support.h"
#include "test_asm.h"

typedef char **symbols_fn(void *const *, int);
typedef void symbols_fd_fn(void *const *, int, int);

static void *libc_function(const char *name)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(libc);
    void *function = dlsym(libc, name);
    cr_assert_not_null(function, "libc has no %s", name);
    return function;
}

static int captured_count;
int exported_datum = 5;
static void *captured[64];

__attribute__((noinline)) static void static_leaf(void)
{
    captured_count = backtrace(captured, 64);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void static_middle(void)
{
    static_leaf();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void global_outer(void)
{
    static_middle();
    __asm__ volatile("" ::: "memory");
}

static int address_in(void *address, void *function, size_t span)
{
    return (uintptr_t)address > (uintptr_t)function &&
           (uintptr_t)address < (uintptr_t)function + span;
}

Test(backtrace, first_frame_is_the_caller_then_its_callers)
{
    global_outer();
    cr_assert_geq(captured_count, 4);
    cr_assert(address_in(captured[0], (void *)static_leaf, 64),
              "frame 0 %p is not in static_leaf %p", captured[0], (void *)static_leaf);
    cr_assert(address_in(captured[1], (void *)static_middle, 64));
    cr_assert(address_in(captured[2], (void *)global_outer, 64));
}

static void *skipped[64];
static int skipped_count, unskipped_count;

__attribute__((noinline)) static void capture_both(int skip)
{
    skipped_count = backtrace_skip(skipped, 64, skip);
    unskipped_count = backtrace_skip(captured, 64, 0);
    __asm__ volatile("" ::: "memory");
}

Test(backtrace, skip_drops_the_innermost_frames)
{
    capture_both(2);
    cr_assert_gt(unskipped_count, 4);
    cr_assert(address_in(captured[0], (void *)capture_both, 64), "skip 0 is backtrace");
    cr_assert_eq(skipped_count, unskipped_count - 2);
    /* From the caller's caller on the two agree (the outermost frames). */
    for (int i = 2; i < unskipped_count; i++)
        cr_assert_eq(skipped[i - 2], captured[i], "frame %d", i);
    cr_assert_eq(backtrace_skip(skipped, 0, 1), 0);
    cr_assert_eq(backtrace_skip(NULL, 4, 1), 0);
    capture_both(-3); /* a negative skip is none */
    cr_assert_eq(skipped_count, unskipped_count);
    cr_assert(address_in(skipped[0], (void *)capture_both, 64));
}

static void *ranged[64];
static int ranged_count;

/* The range is learnt from a first capture: from the lower of the two
 * noinline functions below to the higher of the return addresses inside
 * them, so it holds both call sites of each. */
__attribute__((noinline)) static void capture_in_range(const void *start, const void *end)
{
    ranged_count = backtrace_skip_range(ranged, 3, start, end, NULL);
    unskipped_count = backtrace_skip(captured, 64, 0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void range_middle(const void *start, const void *end)
{
    capture_in_range(start, end);
    __asm__ volatile("" ::: "memory");
}

Test(backtrace, skip_range_drops_every_innermost_frame_inside_the_range)
{
    range_middle(NULL, NULL);
    cr_assert_gt(unskipped_count, 4);
    cr_assert(address_in(captured[0], (void *)capture_in_range, 200));
    cr_assert(address_in(captured[1], (void *)range_middle, 200));
    uintptr_t a = (uintptr_t)capture_in_range, b = (uintptr_t)range_middle;
    uintptr_t c = (uintptr_t)captured[0], d = (uintptr_t)captured[1];
    uintptr_t start = a < b ? a : b, end = (c < d ? d : c) + 1;
    cr_assert(!((uintptr_t)captured[2] >= start && (uintptr_t)captured[2] < end),
              "the test's own frame lies between the two functions: the test needs another layout");
    range_middle((const void *)start, (const void *)end);
    cr_assert_eq(ranged_count, 3, "the size counts only frames kept");
    /* Both frames inside were skipped: the first kept is the test's own. */
    cr_assert(!((uintptr_t)ranged[0] >= start && (uintptr_t)ranged[0] < end),
              "frame 0 %p is inside the range", ranged[0]);
    cr_assert_eq(ranged[0], captured[2]);
    cr_assert_eq(ranged[1], captured[3]);
    /* An empty range skips nothing. */
    range_middle((const void *)start, (const void *)start);
    cr_assert(address_in(ranged[0], (void *)capture_in_range, 200));
    cr_assert_eq(ranged[1], captured[1]);
    cr_assert_eq(backtrace_skip_range(NULL, 4, NULL, NULL, NULL), 0);
    cr_assert_eq(backtrace_skip_range(ranged, 0, NULL, NULL, NULL), 0);
}

/* A memo must never change a trace: captures with one, from stacks that
 * share more or less with the capture before, equal captures without. */
static struct backtrace_memo memo;
static void *with_memo[64], *without_memo[64];
static int with_count, without_count;
static volatile int path_taken;

__attribute__((noinline)) static void memo_leaf(void)
{
    with_count = backtrace_skip_range(with_memo, 64, NULL, NULL, &memo);
    without_count = backtrace_skip_range(without_memo, 64, NULL, NULL, NULL);
    __asm__ volatile("" ::: "memory");
}

/* Two callers with frames of one size, so that memo_common's frame has
 * the same sp and pc whichever called it: only the stack words differ. */
__attribute__((noinline)) static void memo_common(void)
{
    memo_leaf();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void memo_via_a(void)
{
    path_taken = 1;
    memo_common();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void memo_via_b(void)
{
    path_taken = 2;
    memo_common();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void memo_recurse(int depth, int which)
{
    if (depth == 0)
        (which ? memo_via_b : memo_via_a)();
    else
        memo_recurse(depth - 1, which);
    __asm__ volatile("" ::: "memory");
}

static void assert_same_trace(int round)
{
    cr_assert_eq(with_count, without_count, "round %d: %d frames with the memo, %d without",
                 round, with_count, without_count);
    /* Frame 0 is memo_leaf's two call sites: different by construction. */
    for (int i = 1; i < with_count; i++)
        cr_assert_eq(with_memo[i], without_memo[i], "round %d, frame %d", round, i);
}

Test(backtrace, memo_gives_the_same_traces)
{
    static const int depths[] = { 5, 5, 9, 5, 12, 3, 12, 12, 0, 30, 29, 30, 1 };
    int round = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < sizeof depths / sizeof depths[0]; i++, round++) {
            memo_recurse(depths[i], (int)(i + pass) % 2);
            assert_same_trace(round);
            cr_assert_gt(with_count, depths[i] + 3);
        }
    }
    /* The same sp and pc in memo_common, another caller above it. */
    memo_via_a();
    assert_same_trace(round++);
    memo_via_b();
    assert_same_trace(round++);
    cr_assert_eq(with_memo[3], without_memo[3]);
}

/* backtrace_memo_init: a power of two of structs up to 64, else EINVAL
 * with the memo untouched; a memo made by it keeps traces as they are. */
Test(backtrace, memo_init_takes_a_power_of_two_of_structs)
{
    static struct backtrace_memo big[64];
    static const unsigned refused[] = { 0, 3, 6, 48, 65, 128, 1u << 31 };
    memset(big, 0x5a, sizeof big);
    for (unsigned i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        errno = 0;
        cr_assert_eq(backtrace_memo_init(big, refused[i]), -1, "count %u", refused[i]);
        cr_assert_eq(errno, EINVAL, "count %u", refused[i]);
    }
    errno = 0;
    cr_assert_eq(backtrace_memo_init(NULL, 1), -1);
    cr_assert_eq(errno, EINVAL);
    for (size_t i = 0; i < sizeof big; i++)
        cr_assert_eq(((unsigned char *)big)[i], 0x5a, "byte %zu written by a refused call", i);
    for (unsigned count = 1; count <= 64; count *= 2) {
        cr_assert_eq(backtrace_memo_init(big, count), 0, "count %u", count);
        void *with[64], *without[64];
        int n = backtrace_skip_range(with, 64, NULL, NULL, big);
        int m = backtrace_skip_range(without, 64, NULL, NULL, NULL);
        cr_assert_eq(n, m, "count %u", count);
        for (int i = 1; i < n; i++)
            cr_assert_eq(with[i], without[i], "count %u, frame %d", count, i);
        /* And again, from the rules it now holds. */
        n = backtrace_skip_range(with, 64, NULL, NULL, big);
        cr_assert_eq(n, m, "count %u, second capture", count);
    }
}

/* Through a signal frame: the frame after it is an exact pc, whose rule
 * the memo keeps apart from a return address's; raised at several depths
 * and twice each, so that the second walk of each takes its rules from
 * the memo. */
static void capture_in_handler(int signo)
{
    (void)signo;
    memo_leaf();
}

static void raise_at(int depth)
{
    if (depth > 0) {
        raise_at(depth - 1);
        __asm__ volatile("" ::: "memory");
        return;
    }
    raise(SIGUSR2);
}

Test(backtrace, memo_gives_the_same_traces_through_a_signal_frame)
{
    static const int depths[] = { 3, 3, 7, 0, 7, 12, 12, 1 };
    cr_assert_neq(signal(SIGUSR2, capture_in_handler), SIG_ERR);
    for (unsigned i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        raise_at(depths[i]);
        assert_same_trace((int)i);
        cr_assert_gt(with_count, depths[i] + 4);
    }
}

/* A frame whose CFA is kept in rbx (x19 on aarch64: test_asm.h), as glibc's lazy-binding trampoline
 * keeps it: reached through a callee that saves rbx, it can be stepped
 * only with the rbx that callee saved, which a step with a cached rule
 * does not read. The walk must go on through it every time, not only
 * while the callee's rule is not cached yet. */
TEST_ASM_RBX_FRAME

static void *rbx_plain[64], *rbx_memo[64];
static int rbx_plain_count, rbx_memo_count;

__attribute__((noinline)) static void saves_rbx_then_captures(void)
{
    TEST_ASM_CLOBBER_RBX(); /* rbx (x19) saved, then changed */
    rbx_plain_count = backtrace(rbx_plain, 64);
    rbx_memo_count = backtrace_skip_range(rbx_memo, 64, NULL, NULL, &memo);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void call_through_rbx_frame(void)
{
    rbx_frame(saves_rbx_then_captures);
    __asm__ volatile("" ::: "memory");
}

Test(backtrace, a_frame_with_its_cfa_in_rbx_is_walked_every_time)
{
    void *first[64];
    int first_count = 0;
    for (int round = 0; round < 3; round++) {
        call_through_rbx_frame();
        if (round == 0) {
            first_count = rbx_plain_count;
            memcpy(first, rbx_plain, sizeof first);
        }
        cr_assert_eq(rbx_plain_count, first_count, "round %d: %d frames, %d the first time",
                     round, rbx_plain_count, first_count);
        cr_assert_eq(rbx_memo_count, rbx_plain_count, "round %d, with the memo", round);
        for (int i = 1; i < first_count; i++) {
            cr_assert_eq(rbx_plain[i], first[i], "round %d, frame %d", round, i);
            cr_assert_eq(rbx_memo[i], rbx_plain[i], "round %d, frame %d, with the memo", round, i);
        }
    }
    /* Past the rbx frame: its caller, then this test. */
    cr_assert(address_in(first[2], (void *)call_through_rbx_frame, 64), "frame 2 is %p", first[2]);
}

Test(backtrace, size_zero_or_negative_stores_nothing)
{
    void *buffer[4] = { (void *)1, (void *)1, (void *)1, (void *)1 };
    cr_assert_eq(backtrace(buffer, 0), 0);
    cr_assert_eq(backtrace(buffer, -5), 0);
    cr_assert_eq(buffer[0], (void *)1);
}

Test(backtrace, size_one_is_the_caller_only)
{
    void *buffer[2] = { NULL, (void *)7 };
    cr_assert_eq(backtrace(buffer, 1), 1);
    cr_assert_eq(buffer[1], (void *)7, "wrote past size");
}

Test(backtrace, agrees_with_glibc_backtrace)
{
    int (*glibc_backtrace)(void **, int) = (int (*)(void **, int))libc_function("backtrace");
    void *ours[64], *theirs[64];
    int our_count = backtrace(ours, 64);
    int their_count = glibc_backtrace(theirs, 64);
    cr_assert_eq(our_count, their_count);
    /* Frame 0 differs by the call site; the callers are the same. */
    for (int i = 1; i < our_count; i++)
        cr_assert_eq(ours[i], theirs[i], "frame %d: %p vs glibc %p", i, ours[i], theirs[i]);
}

/* libunwind walks the same .eh_frame data: frame for frame, we agree. */
Test(backtrace, agrees_with_libunwind)
{
    void *ours[64], *theirs[64];
    int our_count = backtrace(ours, 64);
    int their_count = unw_backtrace(theirs, 64);
    cr_assert_eq(our_count, their_count);
    for (int i = 1; i < our_count; i++)
        cr_assert(test_same_as_libunwind(ours[i], theirs[i]), "frame %d: %p vs libunwind %p", i,
                  ours[i], theirs[i]);
}

__attribute__((noinline)) static void raise_here_usr2(void)
{
    raise(SIGUSR2);
    __asm__ volatile("" ::: "memory");
}

/* Both walkers called from one place; frames after 0 must be equal. */
struct pair {
    void *ours[128], *theirs[128];
    int our_count, their_count;
};

__attribute__((noinline)) static void capture_pair(struct pair *pair)
{
    pair->our_count = backtrace(pair->ours, 128);
    pair->their_count = unw_backtrace(pair->theirs, 128);
    __asm__ volatile("" ::: "memory");
}

static void assert_pair_agrees(const struct pair *pair, const char *where)
{
    cr_assert_eq(pair->our_count, pair->their_count, "%s: %d frames vs libunwind %d", where,
                 pair->our_count, pair->their_count);
    for (int i = 1; i < pair->our_count; i++)
        cr_assert(test_same_as_libunwind(pair->ours[i], pair->theirs[i]), "%s: frame %d: %p vs %p",
                  where, i, pair->ours[i], pair->theirs[i]);
}

static struct pair in_qsort;

static int compare_and_capture(const void *a, const void *b)
{
    if (in_qsort.our_count == 0)
        capture_pair(&in_qsort);
    return *(const int *)a - *(const int *)b;
}

Test(backtrace, agrees_with_libunwind_through_libc_callbacks)
{
    int values[64];
    for (int i = 0; i < 64; i++)
        values[i] = (i * 37) % 64;
    qsort(values, 64, sizeof values[0], compare_and_capture);
    cr_assert_gt(in_qsort.our_count, 4);
    assert_pair_agrees(&in_qsort, "qsort comparator");
}

/* An over-aligned local makes gcc realign the stack: the CFA then moves
 * from rsp to rbp, and the saved rsp is not the CFA minus a constant. */
__attribute__((noinline)) static void realigned_frame(struct pair *pair)
{
    char buffer[256] __attribute__((aligned(128)));
    memset(buffer, 1, sizeof buffer);
    __asm__ volatile("" : : "r"(buffer) : "memory");
    capture_pair(pair);
    __asm__ volatile("" ::: "memory");
}

Test(backtrace, agrees_with_libunwind_through_a_realigned_frame)
{
    static struct pair pair;
    realigned_frame(&pair);
    assert_pair_agrees(&pair, "realigned frame");
    Dl_info info;
    int found = 0;
    for (int i = 0; i < pair.our_count; i++)
        found |= dladdr(pair.ours[i], &info) && info.dli_sname &&
                 strcmp(info.dli_sname, "backtrace_agrees_with_libunwind_through_a_realigned_frame_impl") == 0;
    cr_assert(found, "the walk did not get past the realigned frame");
}

__attribute__((noinline)) static int recurse_and_capture(int depth, struct pair *pair)
{
    if (depth == 0) {
        capture_pair(pair);
        return 0;
    }
    int result = recurse_and_capture(depth - 1, pair);
    __asm__ volatile("" ::: "memory");
    return result + 1;
}

Test(backtrace, agrees_with_libunwind_deep)
{
    static struct pair pair;
    recurse_and_capture(100, &pair);
    cr_assert_gt(pair.our_count, 100);
    assert_pair_agrees(&pair, "100 deep");
}

static struct pair in_signal;

static void on_usr2(int signo)
{
    (void)signo;
    capture_pair(&in_signal);
}

Test(backtrace, agrees_with_libunwind_inside_a_signal_handler)
{
    signal(SIGUSR2, on_usr2);
    raise(SIGUSR2);
    cr_assert_gt(in_signal.our_count, 3);
    assert_pair_agrees(&in_signal, "signal handler");
}

/* On an alternate signal stack the walk crosses from it to the thread's
 * stack; an alternate stack freed since must not be trusted. */
static struct pair on_altstack;

static void on_usr2_altstack(int signo)
{
    (void)signo;
    capture_pair(&on_altstack);
}

static void *install_altstack(void)
{
    void *memory = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(memory, MAP_FAILED);
    stack_t stack = { .ss_sp = memory, .ss_size = 1 << 16, .ss_flags = 0 };
    cr_assert_eq(sigaltstack(&stack, NULL), 0);
    return memory;
}

Test(backtrace, agrees_with_libunwind_on_an_alternate_stack)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_usr2_altstack;
    action.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR2, &action, NULL);
    for (int round = 0; round < 3; round++) {
        void *memory = install_altstack();
        memset(&on_altstack, 0, sizeof on_altstack);
        raise_here_usr2();
        assert_pair_agrees(&on_altstack, "alternate stack");
        int found = 0;
        for (int i = 0; i < on_altstack.our_count; i++)
            found |= address_in(on_altstack.ours[i], (void *)raise_here_usr2, 64);
        cr_assert(found, "round %d: did not cross into the interrupted code", round);
        stack_t off = { .ss_flags = SS_DISABLE };
        sigaltstack(&off, NULL);
        munmap(memory, 1 << 16); /* the next round's stack lies elsewhere */
        void *hole = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        (void)hole;
    }
}

/* From a handler, the walk crosses the signal frame into the code that
 * was interrupted, as glibc's does. */
static void *in_handler[64];
static int in_handler_count;

static void on_usr1(int signo)
{
    (void)signo;
    in_handler_count = backtrace(in_handler, 64);
}

__attribute__((noinline)) static void raise_here(void)
{
    raise(SIGUSR1);
    __asm__ volatile("" ::: "memory");
}

Test(backtrace, crosses_the_signal_frame)
{
    signal(SIGUSR1, on_usr1);
    raise_here();
    int found = 0;
    for (int i = 0; i < in_handler_count; i++)
        found |= address_in(in_handler[i], (void *)raise_here, 64);
    cr_assert(found, "raise_here not found in %d frames", in_handler_count);
}

Test(backtrace_symbols, names_static_functions)
{
    global_outer();
    char **symbols = backtrace_symbols(captured, captured_count);
    cr_assert_not_null(symbols);
    cr_assert(strstr(symbols[0], "(static_leaf+0x") != NULL, "%s", symbols[0]);
    cr_assert(strstr(symbols[1], "(static_middle+0x") != NULL, "%s", symbols[1]);
    cr_assert(strstr(symbols[2], "(global_outer+0x") != NULL, "%s", symbols[2]);
    free(symbols);
}

/* Where glibc names a frame, we print the very same line; where it cannot
 * (a static function), we print the same path and address with a name. */
static void compare_with_glibc(void *const *frames, int count, int fd_shape)
{
    char **ours = backtrace_symbols(frames, count);
    cr_assert_not_null(ours);
    char **theirs = ((symbols_fn *)libc_function("backtrace_symbols"))(frames, count);
    cr_assert_not_null(theirs);
    for (int i = 0; i < count; i++) {
        int glibc_named = strchr(theirs[i], '(') && !strstr(theirs[i], "(+") &&
                          !strstr(theirs[i], "()");
        if (glibc_named)
            cr_assert_str_eq(ours[i], theirs[i], "frame %d", i);
        else
            cr_assert_str_eq(strrchr(ours[i], '['), strrchr(theirs[i], '['), "frame %d", i);
    }
    (void)fd_shape;
    free(ours);
    free(theirs);
}

Test(backtrace_symbols, matches_glibc_line_for_line)
{
    global_outer();
    compare_with_glibc(captured, captured_count, 0);
}

struct fd_case {
    void *const *frames;
    int count;
    symbols_fd_fn *writer;
};

static void write_symbols_fd(int fd, void *context)
{
    struct fd_case *c = context;
    c->writer(c->frames, c->count, fd);
}

Test(backtrace_symbols_fd, matches_glibc_fd_shape)
{
    global_outer();
    struct fd_case ours = { captured, captured_count, backtrace_symbols_fd };
    struct fd_case theirs = { captured, captured_count,
                              (symbols_fd_fn *)libc_function("backtrace_symbols_fd") };
    char *our_text = capture_output(write_symbols_fd, &ours);
    char *their_text = capture_output(write_symbols_fd, &theirs);
    cr_assert_eq(count_lines(our_text), captured_count);
    char *our_line = our_text, *their_line = their_text;
    for (int i = 0; i < captured_count; i++) {
        char *our_end = strchr(our_line, '\n'), *their_end = strchr(their_line, '\n');
        cr_assert(our_end && their_end);
        *our_end = *their_end = '\0';
        if (strchr(their_line, '(') && !strstr(their_line, "(+"))
            cr_assert_str_eq(our_line, their_line, "line %d", i);
        else
            cr_assert_str_eq(strrchr(our_line, '['), strrchr(their_line, '['));
        our_line = our_end + 1;
        their_line = their_end + 1;
    }
    cr_assert(strstr(our_text, "(static_leaf+0x") != NULL, "%s", our_text);
    free(our_text);
    free(their_text);
}

/* Addresses nobody can name: the same shapes as glibc's. */
Test(backtrace_symbols, hostile_addresses_are_well_formed)
{
    void *frames[] = { NULL, (void *)1, (void *)UINTPTR_MAX, (void *)0xffffffffff600000,
                       (void *)0x10000, (void *)&exported_datum };
    int count = (int)(sizeof frames / sizeof frames[0]);
    char **ours = backtrace_symbols(frames, count);
    char **theirs = ((symbols_fn *)libc_function("backtrace_symbols"))(frames, count);
    cr_assert_not_null(ours);
    cr_assert_str_eq(ours[0], "[(nil)]");
    cr_assert_str_eq(ours[1], "[0x1]");
    cr_assert_str_eq(ours[2], "[0xffffffffffffffff]");
    cr_assert_str_eq(ours[3], "[0xffffffffff600000]");
    for (int i = 0; i < 5; i++)
        cr_assert_str_eq(ours[i], theirs[i], "address %d", i);
    /* A data symbol: glibc names it too (-rdynamic), with the same text. */
    cr_assert_str_eq(ours[5], theirs[5]);
    free(ours);
    free(theirs);
}

static void write_hostile_fd(int fd, void *context)
{
    (void)context;
    void *frames[] = { NULL, (void *)1, (void *)UINTPTR_MAX, (void *)0xffffffffff600000 };
    backtrace_symbols_fd(frames, 4, fd);
}

Test(backtrace_symbols_fd, hostile_addresses_are_well_formed)
{
    char *text = capture_output(write_hostile_fd, NULL);
    cr_assert_str_eq(text, "[0x0]\n[0x1]\n[0xffffffffffffffff]\n[0xffffffffff600000]\n");
    free(text);
}

Test(backtrace_symbols, bad_arguments_return_null)
{
    void *frames[1] = { NULL };
    cr_assert_null(backtrace_symbols(frames, 0));
    cr_assert_null(backtrace_symbols(frames, -1));
    cr_assert_null(backtrace_symbols(NULL, 3));
}

Test(backtrace_symbols, one_block_freed_once)
{
    global_outer();
    char **symbols = backtrace_symbols(captured, captured_count);
    cr_assert_not_null(symbols);
    /* Every string lies inside the block, after the array. */
    for (int i = 0; i < captured_count; i++) {
        cr_assert((char *)symbols[i] > (char *)(symbols + captured_count - 1));
        cr_assert_eq(strchr(symbols[i], '\n'), NULL);
    }
    free(symbols);
}

Test(backtrace_symbols, module_loaded_after_start_is_named)
{
    const char *path = getenv("FIXTURE_LIB");
    cr_assert_not_null(path, "FIXTURE_LIB not set");
    void *library = dlopen(path, RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    void *frames[1] = { (char *)fixture_address() + 1 };
    char **symbols = backtrace_symbols(frames, 1);
    cr_assert_not_null(symbols);
    cr_assert(strstr(symbols[0], "fixture_lib.so(fixture_static_helper+0x1) [") != NULL,
              "%s", symbols[0]);
    free(symbols);
    dlclose(library);
}

Test(backtrace_symbols, address_in_a_dlclosed_module_is_well_formed)
{
    const char *path = getenv("FIXTURE_LIB");
    void *library = dlopen(path, RTLD_NOW);
    cr_assert_not_null(library);
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    void *frames[1] = { fixture_address() };
    dlclose(library);
    char **symbols = backtrace_symbols(frames, 1);
    cr_assert_not_null(symbols);
    char expected[64];
    snprintf(expected, sizeof expected, "[%p]", frames[0]);
    cr_assert_str_eq(symbols[0], expected);
    free(symbols);
}

/* A library replaced on disk after it was loaded (a package upgrade): its
 * file now has another build-id, so the index refuses it and the frame
 * falls back to path(+0xoffset) instead of naming the wrong function.
 * Loaded with libc's own dlopen: ours would index it at once, before the
 * file is replaced (a static link, or a loader of its own, does not). */
Test(backtrace_symbols, module_replaced_on_disk_falls_back_to_offsets)
{
    char directory[] = "/tmp/execinfo_ex_replaced_XXXXXX", path[128], command[512];
    cr_assert_not_null(mkdtemp(directory));
    snprintf(path, sizeof path, "%s/lib.so", directory);
    snprintf(command, sizeof command, "cp '%s' '%s'", getenv("FIXTURE_LIB"), path);
    cr_assert_eq(system(command), 0);
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *(*libc_dlopen)(const char *, int) =
        (void *(*)(const char *, int))dlvsym(libc, "dlopen", "GLIBC_2.34");
    cr_assert_not_null(libc_dlopen);
    void *library = libc_dlopen(path, RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    void *(*fixture_address)(void) = (void *(*)(void))dlsym(library, "fixture_address");
    void *frames[1] = { (char *)fixture_address() + 1 };
    /* Another ELF file with another build-id takes the name. */
    snprintf(command, sizeof command, "cp /proc/self/exe '%s.new' && mv '%s.new' '%s'", path, path,
             path);
    cr_assert_eq(system(command), 0);
    char **symbols = backtrace_symbols(frames, 1);
    cr_assert_not_null(symbols);
    cr_assert(strstr(symbols[0], "lib.so(+0x") != NULL, "%s", symbols[0]);
    free(symbols);
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    system(command);
}
