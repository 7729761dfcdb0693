/* stack_walk.c: walk the stack with DWARF call-frame rules (what differs
 * by architecture: stack_walk_arch.h, stack_walk_x86_64.c, stack_walk_aarch64.c).
 * World: signal-safe: no lock, no malloc; every read from the stack is
 * checked against the mapping that holds it (looked up in /proc/self/maps
 * at most a few times a walk, and remembered per thread), so a corrupted
 * stack ends the walk instead of faulting inside a handler. */
#define _GNU_SOURCE
#include "stack_walk.h"
#include "stack_walk_arch.h"
#include "dwarf_expression.h"
#include "rule_cache.h"
#include "../base/maps_reader.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define MAPPING_LOOKUPS_PER_WALK 4
#define PC CFI_PC

/* The two stack mappings this thread walked last (its own stack, and an
 * alternate signal stack): most walks need no lookup. */
static __thread struct memory_range thread_ranges[2] __attribute__((tls_model("initial-exec")));

static int range_holds(const struct memory_range *range, uintptr_t address, size_t size)
{
    return range->high >= range->low + size && address >= range->low &&
           address <= range->high - size;
}

static void begin_common(struct stack_walk *walk)
{
    uintptr_t sp = walk->registers[CFI_SP];
    int here = range_holds(&thread_ranges[1], sp, 1);

    walk->pc_is_exact = 1;
    walk->mapping_lookups = 0;
    walk->initial_sp = sp;
    walk->crossed_sp = 0;
    walk->steps = 0;
    walk->no_cache = 0;
    walk->cached_steps = 0;
    walk->needs_full_walk = 0;
    walk->last_step_simple = 0;
    /* The mapping we stand in is there; the other one may be gone (a freed
     * alternate stack): it is checked before its first use. */
    if (range_holds(&thread_ranges[here], sp, 1)) {
        walk->readable[0] = thread_ranges[here];
        walk->readable[1] = thread_ranges[!here];
    } else {
        walk->readable[0] = (struct memory_range){ 0, 0 };
        walk->readable[1] = (struct memory_range){ 0, 0 };
    }
    walk->second_is_checked = 0;
}

void stack_walk_begin(struct stack_walk *walk, uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
    memset(walk->registers, 0, sizeof walk->registers);
    walk->registers[PC] = pc;
    walk->registers[CFI_SP] = sp;
    walk->registers[CFI_FP] = fp;
    walk->known = CFI_BIT(PC) | CFI_BIT(CFI_SP) | CFI_BIT(CFI_FP);
    begin_common(walk);
}

/* At a return address (not exact), with what a function's entry saw of
 * its caller: the frame the function returns to. */
void stack_walk_begin_caller(struct stack_walk *walk, uintptr_t return_address, uintptr_t sp,
                             uintptr_t rbp, uintptr_t rbx)
{
    stack_walk_begin(walk, return_address, sp, rbp);
    walk->registers[CFI_CALLEE_SAVED] = rbx;
    walk->known |= CFI_BIT(CFI_CALLEE_SAVED);
    walk->pc_is_exact = 0;
}


void stack_walk_begin_ucontext(struct stack_walk *walk, const void *ucontext)
{
    stack_walk_arch_load_ucontext(walk, ucontext);
    begin_common(walk);
}

/* Look the mapping of ADDRESS up for this walk. The thread remembers it
 * only if it is a stack: the one the walk started on, or the one a signal
 * frame led to; a mapping reached through a stray pointer is not kept. */
static int find_readable_mapping(struct stack_walk *walk, uintptr_t address)
{
    struct maps_entry entry;
    if (walk->mapping_lookups >= MAPPING_LOOKUPS_PER_WALK)
        return -EFAULT;
    walk->mapping_lookups++;
    if (maps_find(address, &entry) < 0 || !entry.readable)
        return -EFAULT;
    struct memory_range found = { entry.start, entry.end };
    if (range_holds(&found, walk->initial_sp, 1)) {
        walk->readable[0] = found;
        thread_ranges[0] = found;
    } else {
        walk->readable[1] = found;
        walk->second_is_checked = 1;
        if (walk->crossed_sp != 0 && range_holds(&found, walk->crossed_sp, 1))
            thread_ranges[1] = found;
    }
    return 0;
}

/* Whether ADDRESS can be read now: one syscall that fails on unmapped and
 * on PROT_NONE memory alike, instead of a lookup in /proc/self/maps. */
static int still_readable(uintptr_t address)
{
    unsigned char byte;
    struct iovec local = { &byte, 1 }, remote = { (void *)address, 1 };
    int saved_errno = errno;
    int readable = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
    errno = saved_errno;
    return readable;
}

int stack_walk_read(struct stack_walk *walk, uintptr_t address, uintptr_t *value)
{
    if (address % sizeof(uintptr_t) != 0)
        return -EFAULT;
    int safe = range_holds(&walk->readable[0], address, sizeof(uintptr_t));
    if (!safe && range_holds(&walk->readable[1], address, sizeof(uintptr_t))) {
        if (!walk->second_is_checked) {
            walk->second_is_checked = 1;
            if (!still_readable(address))
                walk->readable[1] = (struct memory_range){ 0, 0 };
        }
        safe = walk->readable[1].high != 0;
    }
    if (!safe && find_readable_mapping(walk, address) < 0)
        return -EFAULT;
    *value = *(const uintptr_t *)address;
    return 0;
}

int stack_walk_thread_stack(uintptr_t sp, struct memory_range *range)
{
    for (int i = 0; i < 2; i++)
        if (range_holds(&thread_ranges[i], sp, 1)) {
            *range = thread_ranges[i];
            return 1;
        }
    return 0;
}

void stack_walk_adopt_stack(const struct memory_range *range)
{
    thread_ranges[0] = *range;
}

/* ---- one step ------------------------------------------------------------ */

static int compute_cfa(struct stack_walk *walk, const struct cfi_frame *frame, uintptr_t *cfa)
{
    if (frame->cfa_is_expression)
        return dwarf_expression_evaluate(walk, cfi_expression(frame, frame->cfa_offset),
                                         frame->cfa_expression_length, 0, 0, cfa);
    if (frame->cfa_register >= CFI_REGISTER_COUNT || !(walk->known & CFI_BIT(frame->cfa_register)))
        return -EINVAL;
    *cfa = walk->registers[frame->cfa_register] + (uintptr_t)frame->cfa_offset;
    return 0;
}

/* The caller's value of one register; returns 1 if known, 0 if not, <0. */
static int recover(struct stack_walk *walk, const struct cfi_frame *frame,
                   const struct cfi_rule *rule, int number, uintptr_t cfa, uintptr_t *value)
{
    const uint8_t *block = cfi_expression(frame, rule->offset);
    uintptr_t address;
    switch (rule->kind) {
    case CFI_SAME:
        if (number == CFI_SP) { *value = cfa; return 1; } /* the caller's sp is the CFA */
        *value = walk->registers[number];
        return (walk->known >> number) & 1u;
    case CFI_UNDEFINED:
        return 0;
    case CFI_OFFSET:
        return stack_walk_read(walk, cfa + (uintptr_t)rule->offset, value) < 0 ? -EFAULT : 1;
    case CFI_VALUE_OFFSET:
        *value = cfa + (uintptr_t)rule->offset;
        return 1;
    case CFI_REGISTER:
        *value = walk->registers[rule->number];
        return (walk->known >> rule->number) & 1u;
    case CFI_EXPRESSION:
        if (dwarf_expression_evaluate(walk, block, rule->expression_length, 1, cfa, &address) < 0)
            return -EINVAL;
        return stack_walk_read(walk, address, value) < 0 ? -EFAULT : 1;
    case CFI_VALUE_EXPRESSION:
        return dwarf_expression_evaluate(walk, block, rule->expression_length, 1, cfa,
                                         value) < 0 ? -EINVAL : 1;
    }
    return -EINVAL;
}

/* The outermost frame's rule (its return address is undefined). */
static void remember_outermost(uintptr_t pc, unsigned generation)
{
    struct simple_rule rule = { .outermost = 1 };
    rule_cache_store(pc, &rule, generation);
}

/* The frame's rule in the shape the fast path knows, if it has it. */
static int simple_rule_of(const struct cfi_frame *frame, struct simple_rule *rule)
{
    const struct cfi_rule *ra = &frame->rules[CFI_RETURN_ADDRESS], *rbp = &frame->rules[CFI_FP];
    const struct cfi_rule *rsp = &frame->rules[CFI_SP];
    if (frame->cfa_is_expression || frame->signal_frame || rsp->kind != CFI_SAME ||
        (frame->cfa_register != CFI_SP && frame->cfa_register != CFI_FP) ||
        ra->kind != CFI_OFFSET || (rbp->kind != CFI_SAME && rbp->kind != CFI_OFFSET))
        return 0;
    *rule = (struct simple_rule){ frame->cfa_register, rbp->kind == CFI_OFFSET, 0,
                                  (int32_t)frame->cfa_offset, (int32_t)ra->offset,
                                  (int32_t)rbp->offset };
    return 1;
}

static void note_step(struct stack_walk *walk, const struct simple_rule *rule)
{
    walk->last_step_simple = rule != NULL;
    if (rule != NULL)
        walk->last_rule = *rule;
}

static int step_with_rule(struct stack_walk *walk, const struct simple_rule *rule)
{
    if (rule->outermost || !(walk->known & CFI_BIT(rule->cfa_register)))
        return 0;
    uintptr_t cfa = walk->registers[rule->cfa_register] + (uintptr_t)(intptr_t)rule->cfa_offset;
    uintptr_t pc, rbp = walk->registers[CFI_FP];
    if (stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)rule->ra_offset, &pc) < 0)
        return 0;
    pc = unwind_arch_strip(pc);
    if (rule->rbp_saved &&
        stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)rule->rbp_offset, &rbp) < 0)
        return 0;
    if (cfa <= walk->registers[CFI_SP] || pc == 0)
        return 0; /* a stack must grow towards its base */
    int rbp_known = rule->rbp_saved || (walk->known & CFI_BIT(CFI_FP));
    walk->registers[PC] = pc;
    walk->registers[CFI_SP] = cfa;
    walk->registers[CFI_FP] = rbp;
    walk->known = CFI_BIT(PC) | CFI_BIT(CFI_SP) | (rbp_known ? CFI_BIT(CFI_FP) : 0);
    walk->pc_is_exact = 0;
    walk->cached_steps++;
    note_step(walk, rule);
    return 1;
}

static int step_with_frame(struct stack_walk *walk, uintptr_t lookup_pc,
                           const struct cfi_frame *frame, unsigned generation)
{
    uintptr_t cfa, next[CFI_REGISTER_COUNT];
    uint64_t known = 0;

    if (compute_cfa(walk, frame, &cfa) < 0) {
        walk->needs_full_walk = walk->cached_steps > 0;
        return 0;
    }
    for (int r = 0; r < CFI_REGISTER_COUNT; r++) {
        /* The caller's pc is what the return-address column holds (on
         * x86-64 the same slot; on aarch64 x30's). */
        int source = r == PC ? CFI_RETURN_ADDRESS : r;
        int got = recover(walk, frame, &frame->rules[source], source, cfa, &next[r]);
        if (got < 0 && (r == PC || r == CFI_SP))
            return 0;
        if (got > 0)
            known |= CFI_BIT(r);
    }
    if (!(known & CFI_BIT(PC))) {
        if (frame->rules[CFI_RETURN_ADDRESS].kind == CFI_UNDEFINED)
            remember_outermost(lookup_pc, generation);
        return 0; /* undefined return address: the outermost frame */
    }
    next[PC] = unwind_arch_strip(next[PC]);
    /* A return address of 0 ends the stack; an interrupted pc of 0 is a
     * call through a NULL pointer, which the next step recovers from. */
    if (next[PC] == 0 && !frame->signal_frame)
        return 0;
    /* A stack grows towards its base; a leaf function without a frame
     * (aarch64: CFA = sp, the return address in x30) keeps sp, which only
     * an interrupted (exact) pc may be in. */
    if (!frame->signal_frame && (next[CFI_SP] < walk->registers[CFI_SP] ||
                                 (next[CFI_SP] == walk->registers[CFI_SP] && !walk->pc_is_exact)))
        return 0;
    /* Keep the rule for next time if it has the shape the fast path knows. */
    struct simple_rule rule;
    int simple = simple_rule_of(frame, &rule);
    if (simple)
        rule_cache_store(lookup_pc, &rule, generation);
    note_step(walk, simple ? &rule : NULL);
    memcpy(walk->registers, next, sizeof next);
    walk->known = known;
    if (frame->signal_frame)
        walk->crossed_sp = next[CFI_SP];
    /* After a signal frame the pc is the interrupted instruction itself. */
    walk->pc_is_exact = frame->signal_frame;
    return 1;
}

static int step_once(struct stack_walk *walk)
{
    struct simple_rule rule;
    struct cfi_frame frame;
    uintptr_t pc = walk->registers[PC];
    /* A return address may follow the last instruction of its function:
     * its rules are those of the call, one byte before. */
    uintptr_t lookup_pc = walk->pc_is_exact ? pc : pc - 1;

    if (!walk->no_cache && rule_cache_find(lookup_pc, &rule))
        return step_with_rule(walk, &rule);
    unsigned generation = rule_cache_generation();
    if (cfi_find_frame(lookup_pc, &frame) < 0)
        return stack_walk_arch_step_without_cfi(walk);
    return step_with_frame(walk, lookup_pc, &frame, generation);
}

int stack_walk_step(struct stack_walk *walk)
{
    int stepped = step_once(walk);
    walk->steps += stepped;
    return stepped;
}
