/* walk_memo.c: a walk that takes each frame's rule from a small cache of
 * the calling thread's own, in front of the shared rule cache.
 * World: signal-safe (memory reads through stack_walk_read_fast only).
 *
 * An allocator that captures a stack at every malloc steps through the
 * same few hundred return addresses again and again, at depths that
 * change from call to call. A frame's rule depends on its pc alone (while
 * the rule cache's generation holds: no module was unloaded), so the memo
 * keeps the rules of the pcs this thread stepped out of last, direct-
 * mapped by pc, in plain memory: a frame found there is stepped in a few
 * instructions, with no seqlock, no shared cache line and no call, and
 * reads its caller's frame from the live stack as every step does, so the
 * walk is the one a full walk gives. A frame not found is stepped as
 * usual and its rule, if of the simple shape, kept for next time. A frame
 * stood on exactly (where a walk starts, after a signal frame) takes its
 * rule at its pc, a return address one byte before: the two are kept
 * apart (EXACT_KEY), so that the walk's first step, always from the same
 * instruction of the capture, is found too.
 *
 * One memo belongs to one thread and is not used by a signal handler that
 * may interrupt a capture with it (execinfo_ex.h). */
#include "walk_memo.h"
#include "execinfo_ex.h"

#include <string.h>

#define MEMO_MAGIC 0x6f6d656du   /* "memo" */
#define PC CFI_RETURN_ADDRESS
#define RULE_RBP_BASED 1u         /* the CFA is rbp + offset, else rsp + offset */
#define RULE_RBP_SAVED 2u
#define RULE_OUTERMOST 4u         /* the walk ends here (its return address is undefined) */
/* An exact pc's key: no x86_64 user address has the top bit. */
#define EXACT_KEY ((uintptr_t)1 << 63)

/* The rule of one frame: a return address, or an exact pc | EXACT_KEY.
 * The return address is at a small offset from the CFA on x86_64 (-8);
 * rbp may be saved further down. */
struct memo_rule {
    uintptr_t key;               /* 0: empty */
    int32_t cfa_offset;
    int16_t rbp_offset;
    int8_t ra_offset;
    uint8_t flags;
};

/* 256 slots of 16 bytes, the first of which holds the header instead of
 * a rule: a shift finds a slot, where a modulo would cost a multiply. */
#define MEMO_SLOT_BITS 8
#define MEMO_SLOTS (1u << MEMO_SLOT_BITS)

struct memo_header {
    uint32_t magic;
    uint32_t generation;
    uint64_t unused;
};

struct memo_layout {
    union {
        struct memo_header header;    /* slot 0 */
        struct memo_rule rules[MEMO_SLOTS];
    };
};

_Static_assert(sizeof(struct memo_rule) == 16, "a rule is 16 bytes");
_Static_assert(sizeof(struct memo_header) <= sizeof(struct memo_rule), "the header fits slot 0");
_Static_assert(sizeof(struct memo_layout) <= sizeof(struct backtrace_memo),
               "struct backtrace_memo is too small for the memo");

static struct memo_rule *slot_for(struct memo_layout *layout, uintptr_t key)
{
    unsigned slot = (unsigned)(((uint64_t)key * 0x9e3779b97f4a7c15u) >> (64 - MEMO_SLOT_BITS));
    return &layout->rules[slot + (slot == 0)]; /* slot 0 is the header's */
}

void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo)
{
    pass->memo = (struct memo_layout *)memo;
    if (memo == NULL)
        return;
    unsigned generation = rule_cache_generation();
    struct memo_layout *layout = pass->memo;
    /* New, or a module was unloaded since: its rules may be another's. */
    if (layout->header.magic != MEMO_MAGIC || layout->header.generation != generation) {
        memset(layout, 0, sizeof *layout);
        layout->header.magic = MEMO_MAGIC;
        layout->header.generation = generation;
    }
}

/* Keep RULE, which stepped out of the frame of KEY (or ended the walk
 * there: RULE's outermost). */
static void remember(struct memo_layout *layout, uintptr_t key, const struct simple_rule *rule)
{
    if (rule->ra_offset < INT8_MIN || rule->ra_offset > INT8_MAX ||
        rule->rbp_offset < INT16_MIN || rule->rbp_offset > INT16_MAX)
        return;
    struct memo_rule *slot = slot_for(layout, key);
    slot->key = key;
    slot->cfa_offset = rule->cfa_offset;
    slot->ra_offset = (int8_t)rule->ra_offset;
    slot->rbp_offset = (int16_t)rule->rbp_offset;
    slot->flags = (rule->cfa_register == CFI_RBP ? RULE_RBP_BASED : 0) |
                  (rule->rbp_saved ? RULE_RBP_SAVED : 0) | (rule->outermost ? RULE_OUTERMOST : 0);
}

/* Step through the frames whose rules the memo has, from the registers
 * in R (KEY: the first frame's key), reading only words of the stack in
 * [LOW, LOW + SPAN] (8-aligned, as a full step reads them): the hot path
 * of a capture, with everything in locals. Stops where a step with the
 * rule would fail or needs what the memo does not have; the slow path
 * then says why. Returns how many pcs it stored; sets R->ended when the
 * frame it stopped at is the outermost one. */
static int replay(const struct memo_layout *layout, struct memo_registers *r, uintptr_t key,
                  uintptr_t low, uintptr_t span, void **buffer, int size)
{
    uintptr_t pc = r->pc, sp = r->sp, rbp = r->rbp;
    int rbp_known = r->rbp_known, stored = 0;

    /* After the first step every frame is a return address: a rule kept
     * has the simple shape, which no signal frame has. */
    while (stored < size) {
        const struct memo_rule *rule = slot_for((struct memo_layout *)layout, key);
        unsigned flags = rule->flags;
        if (rule->key != key)
            break;
        if (flags & (RULE_OUTERMOST | RULE_RBP_BASED)) {
            if (flags & RULE_OUTERMOST) {
                r->ended = 1;
                break;
            }
            if (!rbp_known)
                break;
        }
        uintptr_t cfa = ((flags & RULE_RBP_BASED) ? rbp : sp) + (uintptr_t)(intptr_t)rule->cfa_offset;
        uintptr_t at = cfa + (uintptr_t)(intptr_t)rule->ra_offset;
        if (at - low > span || (at & 7) != 0 || cfa <= sp)
            break;
        uintptr_t next_pc = *(const uintptr_t *)at;
        if (next_pc == 0)
            break;
        if (flags & RULE_RBP_SAVED) {
            uintptr_t rbp_at = cfa + (uintptr_t)(intptr_t)rule->rbp_offset;
            if (rbp_at - low > span || (rbp_at & 7) != 0)
                break;
            rbp = *(const uintptr_t *)rbp_at;
            rbp_known = 1;
        }
        pc = next_pc;
        sp = cfa;
        key = pc;
        buffer[stored++] = (void *)pc;
    }
    r->pc = pc;
    r->sp = sp;
    r->rbp = rbp;
    r->rbp_known = rbp_known;
    return stored;
}

/* [low, low + span]: where a word may be read at once. If RANGE is
 * unknown, low UINTPTR_MAX and span 0: the one address that passes the
 * range test then is odd, and the alignment test refuses it. */
static void readable_words(struct memory_range range, uintptr_t *low, uintptr_t *span)
{
    *low = UINTPTR_MAX;
    *span = 0;
    if (range.high >= sizeof(uintptr_t) && range.high - sizeof(uintptr_t) >= range.low) {
        *low = range.low;
        *span = range.high - sizeof(uintptr_t) - range.low;
    }
}

/* replay() from WALK's registers, and WALK moved to where it stopped. */
static int run_known(struct memo_layout *layout, struct stack_walk *walk, void **buffer, int size,
                     int *ended)
{
    uintptr_t low, span;
    readable_words(walk->readable[0], &low, &span);
    struct memo_registers r = {
        .pc = walk->registers[PC], .sp = walk->registers[CFI_RSP],
        .rbp = walk->registers[CFI_RBP], .rbp_known = (walk->known >> CFI_RBP) & 1,
    };
    uintptr_t key = walk->pc_is_exact ? r.pc | EXACT_KEY : r.pc;
    int stored = replay(layout, &r, key, low, span, buffer, size);
    *ended = r.ended;
    if (stored > 0) {
        walk->registers[PC] = r.pc;
        walk->registers[CFI_RSP] = r.sp;
        walk->registers[CFI_RBP] = r.rbp;
        walk->known = 1u << PC | 1u << CFI_RSP | (r.rbp_known ? 1u << CFI_RBP : 0);
        walk->pc_is_exact = 0;
        walk->steps += stored;
        walk->cached_steps += stored;
    }
    return stored;
}

int walk_memo_replay_caller(struct backtrace_memo *memo, struct memo_registers *r,
                            void **buffer, int size)
{
    struct memo_pass pass;
    struct memory_range stack;
    r->ended = 0;
    if (memo == NULL || !stack_walk_thread_stack(r->sp, &stack))
        return 0;
    walk_memo_begin(&pass, memo);
    uintptr_t low, span;
    readable_words(stack, &low, &span);
    return replay(pass.memo, r, r->pc, low, span, buffer, size);
}

int walk_memo_next(struct memo_pass *pass, struct stack_walk *walk, void **buffer, int size)
{
    struct memo_layout *layout = walk->no_cache ? NULL : pass->memo;
    if (layout != NULL) {
        int ended = 0;
        int stored = run_known(layout, walk, buffer, size, &ended);
        if (stored > 0 || ended)
            return stored;
    }
    int exact = walk->pc_is_exact;
    uintptr_t from = exact ? walk->registers[PC] | EXACT_KEY : walk->registers[PC];
    if (stack_walk_step(walk) <= 0) {
        /* The end of the stack (_start, a thread's start): known next time
         * without a step, if the shared cache says it is the outermost. */
        struct simple_rule rule;
        if (layout != NULL && rule_cache_find(exact ? from & ~EXACT_KEY : from - 1, &rule) &&
            rule.outermost)
            remember(layout, from, &rule);
        return 0;
    }
    if (layout != NULL && walk->last_step_simple)
        remember(layout, from, &walk->last_rule);
    buffer[0] = (void *)walk->registers[PC];
    return 1;
}

void walk_memo_end(struct memo_pass *pass)
{
    (void)pass; /* the rules were kept as they were found */
}
