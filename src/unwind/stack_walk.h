/* stack_walk.h: step from one frame to its caller with the DWARF rules. */
#ifndef EXECINFO_EX_STACK_WALK_H
#define EXECINFO_EX_STACK_WALK_H

#include <stdint.h>

#include "dwarf_cfi.h"
#include "rule_cache.h"

struct memory_range {
    uintptr_t low, high;
};

struct stack_walk {
    uintptr_t registers[CFI_REGISTER_COUNT];  /* [16] is the pc */
    uint64_t known;                           /* bit r: registers[r] is valid */
    int pc_is_exact;       /* the pc is an interrupted instruction, not a return address */
    /* Where reads are known to be safe: [0] the stack the walk started on,
     * [1] the one it crossed into (from a signal handler's alternate stack). */
    struct memory_range readable[2];
    int second_is_checked;
    int mapping_lookups;
    uintptr_t initial_sp;  /* the stack the walk started on */
    uintptr_t crossed_sp;  /* the stack a signal frame led to, or 0 */
    int steps;             /* taken so far */
    /* A step with a cached rule (the shared rule cache, a walk memo)
     * knows rsp and rbp after it, not the registers the frame saved: a
     * later frame whose CFA is one of those (glibc's lazy-binding
     * trampoline keeps it in rbx) cannot be stepped then, where a walk
     * from the CFI alone can. Such a walk says so (needs_full_walk), and
     * its caller walks again with no_cache. */
    int no_cache;
    int cached_steps;
    int needs_full_walk;
    /* The rule of the last step, when it had the simple shape, for a walk
     * memo (walk_memo.c) to use again. */
    int last_step_simple;
    struct simple_rule last_rule;
};

/* Start from registers taken at one instruction (pc exact). */
void stack_walk_begin(struct stack_walk *walk, uintptr_t pc, uintptr_t sp, uintptr_t fp);

/* Start at a return address RETURN_ADDRESS, with the caller's registers
 * as a function's entry saw them (backtrace_from_caller). */
void stack_walk_begin_caller(struct stack_walk *walk, uintptr_t return_address, uintptr_t sp,
                             uintptr_t rbp, uintptr_t rbx);

/* Start from a signal handler's ucontext_t (x86_64 Linux). */
void stack_walk_begin_ucontext(struct stack_walk *walk, const void *ucontext);

/* Move to the caller. Returns 1, or 0 at the end of the stack (no rule,
 * an undefined return address, a bad read, a stack going backwards).
 * Every memory read is checked against the mappings first. Signal-safe. */
int stack_walk_step(struct stack_walk *walk);

/* Take RANGE as the calling thread's stack mapping, as if a walk had met
 * it: a thread asked for its trace by another, which read
 * /proc/self/maps once for all of them (src/threads/thread_request.c),
 * does not read it again. Signal-safe. */
void stack_walk_adopt_stack(const struct memory_range *range);

/* The calling thread's stack mapping (or its alternate signal stack)
 * that holds SP, if a walk of this thread has met it: 1 and *RANGE, or 0.
 * Signal-safe. */
int stack_walk_thread_stack(uintptr_t sp, struct memory_range *range);

/* Read the word at ADDRESS if it lies in a readable mapping. Returns 0 or
 * -EFAULT. Signal-safe. */
int stack_walk_read(struct stack_walk *walk, uintptr_t address, uintptr_t *value);

/* The same, inline for the common case: an aligned word of the stack the
 * walk started on. */
static inline int stack_walk_read_fast(struct stack_walk *walk, uintptr_t address,
                                       uintptr_t *value)
{
    const struct memory_range *stack = &walk->readable[0];
    if (address % sizeof(uintptr_t) == 0 && address >= stack->low &&
        stack->high >= sizeof(uintptr_t) && address <= stack->high - sizeof(uintptr_t)) {
        *value = *(const uintptr_t *)address;
        return 0;
    }
    return stack_walk_read(walk, address, value);
}

#endif
