/* capture.c: backtrace() and backtrace_ucontext() on our DWARF walker.
 * World: signal-safe.
 *
 * libunwind is not used to walk: its lookup of unwind tables takes the
 * loader lock and deadlocks in handlers (dwarf_cfi.c says how). The walker
 * reads the same .eh_frame data libunwind would, found through
 * _dl_find_object, and tests/unit/test_backtrace.c checks frame for frame
 * that both agree. */
#include "capture.h"
#include "stack_walk.h"
#include "thread_memo.h"
#include "walk_memo.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* The frames of WALK, SKIP first dropped, then any in [LOW, HIGH) until
 * one is outside it. EXACT, if not NULL, gets 1 for each frame that is an
 * interrupted instruction (the one after a signal frame) rather than a
 * return address; only without a MEMO, which gives them all at once. */
static int collect(struct stack_walk *walk, void **buffer, unsigned char *exact, int size,
                   int skip, uintptr_t low, uintptr_t high, struct backtrace_memo *memo)
{
    struct memo_pass pass;
    int count = 0;

    walk_memo_begin(&pass, memo);
    while (count < size) {
        /* The next frames: with a memo, a run of those it knows, or one
         * step; without, one step. */
        int fresh, stepped_exact = 0;
        if (memo != NULL) {
            fresh = walk_memo_next(&pass, walk, buffer + count, size - count);
            if (fresh == 0)
                break;
        } else {
            if (stack_walk_step(walk) <= 0)
                break;
            buffer[count] = (void *)walk->registers[CFI_PC];
            stepped_exact = walk->pc_is_exact;
            fresh = 1;
        }
        /* Past the first frame kept, every frame is kept where it was
         * stored (exact is only asked for without a memo: one a step). */
        if (count > 0) {
            if (exact != NULL)
                exact[count] = (unsigned char)stepped_exact;
            count += fresh;
            continue;
        }
        /* Before it: drop the SKIP first frames, then those in [LOW, HIGH),
         * and move the rest down. */
        int first = 0;
        for (; first < fresh && skip > 0; first++)
            skip--;
        while (first < fresh && (uintptr_t)buffer[first] >= low && (uintptr_t)buffer[first] < high)
            first++;
        if (first < fresh) {
            if (first > 0)
                memmove(buffer, buffer + first, (size_t)(fresh - first) * sizeof *buffer);
            if (exact != NULL)
                exact[0] = (unsigned char)stepped_exact;
            count = fresh - first;
        }
    }
    walk_memo_end(&pass);
    return count;
}

/* Registers of this very instruction: the walk starts inside this
 * function, whose frame and whose caller's (backtrace) are then skipped,
 * then SKIP more (collect). A walk that cached rules cut short is walked
 * again from the CFI alone, from the same registers: this frame is still
 * there. */
__attribute__((noinline))
static int walk_from_here(void **buffer, unsigned char *exact, int size, int skip,
                          uintptr_t low, uintptr_t high, struct backtrace_memo *memo)
{
    struct stack_walk walk;
    uintptr_t pc, sp, fp;

    UNWIND_ARCH_HERE(pc, sp, fp);
    stack_walk_begin(&walk, pc, sp, fp);
    int count = collect(&walk, buffer, exact, size, skip, low, high, memo);
    if (walk.needs_full_walk) {
        stack_walk_begin(&walk, pc, sp, fp);
        walk.no_cache = 1;
        count = collect(&walk, buffer, exact, size, skip, low, high, memo);
    }
    return count;
}

int capture_backtrace_kinds(void **buffer, unsigned char *exact, int size)
{
    int saved_errno = errno;
    if (size <= 0 || buffer == NULL)
        return 0;
    /* Skip the return address into capture_backtrace_kinds itself. */
    int count = walk_from_here(buffer, exact, size, 1, 0, 0, NULL);
    errno = saved_errno;
    return count;
}

/* The walk of this thread's memo, if it is free (thread_memo.c). */
static struct backtrace_memo *memo_of(struct thread_memo *held)
{
    return held != NULL ? thread_memo_memo(held) : NULL;
}

int capture_backtrace(void **buffer, int size)
{
    int saved_errno = errno;
    if (size <= 0 || buffer == NULL)
        return 0;
    /* Skip the return address into capture_backtrace itself. */
    struct thread_memo *held = thread_memo_take();
    int count = walk_from_here(buffer, NULL, size, 1, 0, 0, memo_of(held));
    thread_memo_give_back(held);
    errno = saved_errno;
    return count;
}

/* backtrace without the SKIP innermost frames. A name of our own as well:
 * the hooks library would otherwise bind "backtrace" to glibc's, which
 * comes first in the process's lookup order. */
__attribute__((visibility("default")))
int backtrace_skip(void **buffer, int size, int skip)
{
    int saved_errno = errno;
    if (size <= 0 || buffer == NULL)
        return 0;
    struct thread_memo *held = thread_memo_take();
    int count = walk_from_here(buffer, NULL, size, 1 + (skip > 0 ? skip : 0), 0, 0, memo_of(held));
    thread_memo_give_back(held);
    errno = saved_errno;
    return count;
}

/* backtrace from the first frame outside [START, END): for a wrapper (an
 * allocator, a logger) whose own frames come first, however many the
 * compiler left of them; with a memo of its last walk (walk_memo.c). */
__attribute__((visibility("default")))
int backtrace_skip_range(void **buffer, int size, const void *start, const void *end,
                         struct backtrace_memo *memo)
{
    int saved_errno = errno;
    if (size <= 0 || buffer == NULL)
        return 0;
    int count = walk_from_here(buffer, NULL, size, 1, (uintptr_t)start, (uintptr_t)end, memo);
    errno = saved_errno;
    return count;
}

/* The walk of backtrace_from_caller from R, where the memo's replay
 * stopped after STORED frames (0: at the caller itself, whose rbx is
 * still known; WALK_FROM_CFI_ALONE: there too, with no cached rule at
 * all), into BUFFER[0, SIZE). */
#define WALK_FROM_CFI_ALONE (-1)
static int walk_on(struct stack_walk *walk, const struct memo_registers *r, uintptr_t rbx,
                   int stored, void **buffer, int size, struct backtrace_memo *memo)
{
    stack_walk_begin_caller(walk, r->pc, r->sp, r->rbp, rbx);
    walk->no_cache = memo == NULL && stored < 0;
    if (stored > 0) {
        /* After cached steps only these are known, as after any. */
        walk->known = CFI_BIT(CFI_PC) | CFI_BIT(CFI_SP) | (r->rbp_known ? CFI_BIT(CFI_FP) : 0);
        walk->steps = walk->cached_steps = stored;
    }
    return collect(walk, buffer, NULL, size, 0, 0, 0, memo);
}

/* backtrace from a caller's frame as its callee's entry saw it: the
 * callee's frames are not stepped at all (an allocator's entry, its
 * recording code and the capture's own frames were 5 of the 21 frames a
 * malloc walked). With a memo, the frames whose rules it has are replayed
 * first, in a loop that needs no struct stack_walk: for a stack met
 * before, that is the whole capture. A walk that cached rules cut short
 * is walked again from the CFI alone, from the caller's registers. */
__attribute__((visibility("default")))
int backtrace_from_caller(void **buffer, int size, const struct backtrace_caller *caller,
                          struct backtrace_memo *memo)
{
    if (size <= 0 || buffer == NULL || caller == NULL)
        return 0;
    buffer[0] = (void *)caller->return_address;
    if (size == 1)
        return 1; /* heap_frames=1: the caller's call site alone */
    const struct memo_registers start = {
        .pc = (uintptr_t)caller->return_address, .sp = (uintptr_t)caller->stack_pointer,
        .rbp = (uintptr_t)caller->rbp, .rbp_known = 1,
    };
    uintptr_t rbx = (uintptr_t)caller->rbx;
    struct stack_walk walk;
    struct memo_registers r = start;
    int count = 1 + walk_memo_replay_caller(memo, &r, buffer + 1, size - 1);
    if (!r.ended && count < size) {
        /* Only a step may set errno (reading a module's tables); the
         * replay does not, and a known stack needs no save. */
        int saved_errno = errno;
        count += walk_on(&walk, &r, rbx, count - 1, buffer + count, size - count, memo);
        if (walk.needs_full_walk)
            count = 1 + walk_on(&walk, &start, rbx, WALK_FROM_CFI_ALONE, buffer + 1, size - 1,
                                NULL);
        errno = saved_errno;
    }
    return count;
}

/* The public name is an alias, so that calls from inside the library do
 * not go through the PLT to whatever backtrace a program interposes. */
__attribute__((visibility("default"), alias("capture_backtrace")))
int backtrace(void **buffer, int size);

int capture_registers_kinds(void **buffer, unsigned char *exact, int size, uintptr_t pc,
                            uintptr_t sp)
{
    int saved_errno = errno;
    struct stack_walk walk;
    int count = 0;

    if (size <= 0 || buffer == NULL)
        return 0;
    stack_walk_begin(&walk, pc, sp, 0);
    walk.known &= ~CFI_BIT(CFI_FP); /* not shown: a rule that needs it ends the walk */
    walk.no_cache = 1;
    do {
        if (exact != NULL)
            exact[count] = (unsigned char)walk.pc_is_exact;
        buffer[count++] = (void *)walk.registers[CFI_PC];
    } while (count < size && stack_walk_step(&walk) > 0);
    errno = saved_errno;
    return count;
}

int capture_ucontext_kinds(void **buffer, unsigned char *exact, int size, const void *ucontext)
{
    int saved_errno = errno;
    struct stack_walk walk;
    int count = 0;

    if (size <= 0 || buffer == NULL || ucontext == NULL)
        return 0;
    /* Frame 0 is the interrupted pc even when it is 0 or 1 (a call
     * through a NULL pointer): the walk then recovers the caller from the
     * return address the call left at the stack pointer. A walk that
     * cached rules cut short is walked again from the CFI alone. */
    for (int no_cache = 0; no_cache < 2; no_cache++) {
        stack_walk_begin_ucontext(&walk, ucontext);
        walk.no_cache = no_cache;
        count = 0;
        do {
            if (exact != NULL)
                exact[count] = (unsigned char)walk.pc_is_exact;
            buffer[count++] = (void *)walk.registers[CFI_PC];
        } while (count < size && stack_walk_step(&walk) > 0);
        if (!walk.needs_full_walk)
            break;
    }
    errno = saved_errno;
    return count;
}

/* backtrace_ucontext with this thread's memo: frame 0, the interrupted
 * pc, then the frames collect() gives, which are those of the loop above
 * (walk_memo_next gives what a step gives). */
static int ucontext_with_memo(void **buffer, int size, const void *ucontext,
                              struct backtrace_memo *memo)
{
    struct stack_walk walk;
    int count = 0;
    for (int no_cache = 0; no_cache < 2; no_cache++) {
        stack_walk_begin_ucontext(&walk, ucontext);
        walk.no_cache = no_cache;
        buffer[0] = (void *)walk.registers[CFI_PC];
        count = 1;
        if (size > 1)
            count += collect(&walk, buffer + 1, NULL, size - 1, 0, 0, 0, memo);
        if (!walk.needs_full_walk)
            break;
    }
    return count;
}

__attribute__((visibility("default")))
int backtrace_ucontext(void **buffer, int size, const void *ucontext)
{
    if (size <= 0 || buffer == NULL || ucontext == NULL)
        return 0;
    struct thread_memo *held = thread_memo_take();
    if (held == NULL)
        return capture_ucontext_kinds(buffer, NULL, size, ucontext);
    int saved_errno = errno;
    int count = ucontext_with_memo(buffer, size, ucontext, thread_memo_memo(held));
    thread_memo_give_back(held);
    errno = saved_errno;
    return count;
}
