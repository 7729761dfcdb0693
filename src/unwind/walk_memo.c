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
 * A memo is one struct backtrace_memo (255 rules), or a power of two of
 * them made ready by backtrace_memo_init (256 rules each): a deep program
 * (an interpreter) steps through more return addresses than 255.
 *
 * One memo belongs to one thread and is not used by a signal handler that
 * may interrupt a capture with it (execinfo_ex.h). */
#include "walk_memo.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <string.h>

/* Slot 0 holds the header; its first word, where a rule has its key, is
 * no key (bit 62 is set in no user address and in no EXACT_KEY one). */
#define MEMO_HEADER_KEY (((uint64_t)1 << 62) | 0x6f6d656du) /* "memo" */
#define PC CFI_PC
#define RULE_RBP_BASED 1u         /* the CFA is rbp + offset, else rsp + offset */
#define RULE_RBP_SAVED 2u
#define RULE_OUTERMOST 4u         /* the walk ends here (its return address is undefined) */
/* Not of the shape replay() steps with the fewest checks: the CFA rsp
 * plus a positive multiple of 8, the return address (and rbp, if saved)
 * read from 8-aligned words between rsp and the CFA. */
#define RULE_GENERAL 8u
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

/* Slots of 16 bytes, a power of two, the first of which holds the header
 * instead of a rule: a shift finds a slot, where a modulo would cost a
 * multiply. */
#define MEMO_SLOT_BITS_DEFAULT 8
#define MEMO_COUNT_MAX 64
#define MEMO_SLOT_BITS_MAX (MEMO_SLOT_BITS_DEFAULT + 6)

struct memo_header {
    uint64_t header_key;     /* MEMO_HEADER_KEY */
    uint32_t generation;
    uint32_t slot_bits;
};

struct memo_layout {
    struct memo_header header;        /* slot 0 */
};

_Static_assert(sizeof(struct memo_rule) == 16, "a rule is 16 bytes");
_Static_assert(sizeof(struct memo_header) <= sizeof(struct memo_rule), "the header fits slot 0");
_Static_assert(sizeof(struct memo_rule) << MEMO_SLOT_BITS_DEFAULT == sizeof(struct backtrace_memo),
               "struct backtrace_memo holds the default memo");

/* The slot of KEY in a memo of 2^BITS slots: its low bits. Return
 * addresses are spread over their low bits (a function's calls sit at
 * unrelated offsets); a multiplicative hash spread them no better on
 * CPython (more misses, not fewer) and cost a multiply on a path whose
 * every cycle counts. Slot 0 holds the header: a key whose low bits are
 * 0 takes the last slot instead (it used to be never kept, and a
 * recursion whose return address ends in 0x00 missed at every frame:
 * 1.8x the instructions of a walk without the memo, issue 23). A branch,
 * not a conditional move: it is predicted, and stays off the chain of
 * loads from one frame to the next. */
static inline __attribute__((always_inline)) const struct memo_rule *
slot_for(const struct memo_layout *layout, unsigned bits, uintptr_t key)
{
    uintptr_t size = sizeof(struct memo_rule) << bits;
    uintptr_t offset = (key << 4) & (size - 1);
    if (__builtin_expect(offset == 0, 0))
        offset = size - sizeof(struct memo_rule);
    return (const struct memo_rule *)((const char *)layout + offset);
}

/* Every rule empty, a memo of 2^SLOT_BITS slots. */
static void memo_clear(struct memo_layout *layout, unsigned slot_bits, unsigned generation)
{
    memset(layout, 0, sizeof(struct memo_rule) << slot_bits);
    layout->header.header_key = MEMO_HEADER_KEY;
    layout->header.generation = generation;
    layout->header.slot_bits = slot_bits;
}

__attribute__((visibility("default")))
int backtrace_memo_init(struct backtrace_memo *memo, unsigned count)
{
    if (memo == NULL || count == 0 || count > MEMO_COUNT_MAX || (count & (count - 1)) != 0) {
        errno = EINVAL;
        return -1;
    }
    unsigned bits = MEMO_SLOT_BITS_DEFAULT;
    while ((1u << (bits - MEMO_SLOT_BITS_DEFAULT)) < count)
        bits++;
    memo_clear((struct memo_layout *)memo, bits, rule_cache_generation());
    return 0;
}

/* Whether LAYOUT is a memo this code made, of this generation of the
 * rule cache: the one test of every capture's hot path. */
static inline __attribute__((always_inline)) int memo_ready(const struct memo_layout *layout)
{
    const struct memo_header *header = &layout->header;
    return header->header_key == MEMO_HEADER_KEY &&
           header->slot_bits - MEMO_SLOT_BITS_DEFAULT <= MEMO_SLOT_BITS_MAX - MEMO_SLOT_BITS_DEFAULT &&
           header->generation == rule_cache_generation();
}

/* Make LAYOUT ready: new (zeroed, or not one this code made), a memo of
 * one struct; a module was unloaded since, emptied (its rules may be
 * another's). */
static void memo_make_ready(struct memo_layout *layout)
{
    unsigned generation = rule_cache_generation();
    if (layout->header.header_key != MEMO_HEADER_KEY ||
        layout->header.slot_bits < MEMO_SLOT_BITS_DEFAULT ||
        layout->header.slot_bits > MEMO_SLOT_BITS_MAX)
        memo_clear(layout, MEMO_SLOT_BITS_DEFAULT, generation);
    else
        memo_clear(layout, layout->header.slot_bits, generation);
}

void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo)
{
    pass->memo = (struct memo_layout *)memo;
    if (memo != NULL && !memo_ready(pass->memo))
        memo_make_ready(pass->memo);
}

/* Whether RULE has the shape replay() steps with the fewest checks. */
static int plain_shape(const struct simple_rule *rule)
{
    int32_t cfa = rule->cfa_offset;
    return rule->cfa_register != CFI_FP && !rule->outermost && cfa > 0 && cfa % 8 == 0 &&
           rule->ra_offset % 8 == 0 && rule->ra_offset <= -8 && rule->ra_offset >= -cfa &&
           (!rule->rbp_saved ||
            (rule->rbp_offset % 8 == 0 && rule->rbp_offset <= -8 && rule->rbp_offset >= -cfa));
}

/* Keep RULE, which stepped out of the frame of KEY (or ended the walk
 * there: RULE's outermost). */
static void remember(struct memo_layout *layout, uintptr_t key, const struct simple_rule *rule)
{
    if (rule->ra_offset < INT8_MIN || rule->ra_offset > INT8_MAX ||
        rule->rbp_offset < INT16_MIN || rule->rbp_offset > INT16_MAX)
        return;
    struct memo_rule *slot =
        (struct memo_rule *)slot_for(layout, layout->header.slot_bits, key);
    slot->key = key;
    slot->cfa_offset = rule->cfa_offset;
    slot->ra_offset = (int8_t)rule->ra_offset;
    slot->rbp_offset = (int16_t)rule->rbp_offset;
    slot->flags = (rule->cfa_register == CFI_FP ? RULE_RBP_BASED : 0) |
                  (rule->rbp_saved ? RULE_RBP_SAVED : 0) | (rule->outermost ? RULE_OUTERMOST : 0);
    if (!plain_shape(rule))
        slot->flags |= RULE_GENERAL;
}

/* Step through the frames whose rules the memo has, from the registers
 * in R (KEY: the first frame's key), reading only words of the stack in
 * [LOW, LOW + SPAN] (8-aligned, as a full step reads them): the hot path
 * of a capture, with everything in locals. Stops where a step with the
 * rule would fail or needs what the memo does not have; the slow path
 * then says why. Returns how many pcs it stored; sets R->ended when the
 * frame it stopped at is the outermost one.
 *
 * A rule of the plain shape (most frames: no RULE_* flag but
 * RULE_RBP_SAVED) is stepped with one bounds check. From an 8-aligned
 * stack pointer inside the range, its CFA is 8-aligned and above it, and
 * the words it reads lie between the two: they pass every check a full
 * step makes when the CFA's word below is in the range. Any other rule
 * takes every check, and stops the replay where the CFA it gives is not
 * 8-aligned, so that the next step may rely on it again. */
static inline __attribute__((always_inline)) int
replay(const struct memo_layout *layout, struct memo_registers *r, uintptr_t key, uintptr_t low,
       uintptr_t span, void **buffer, int size)
{
    uintptr_t pc = r->pc, sp = r->sp, rbp = r->rbp;
    int rbp_known = r->rbp_known;
    const unsigned bits = layout->header.slot_bits;
    /* A plain rule's CFA is in range when the word below it is: when
     * cfa - 8 lies in [low, low + span], that is cfa - cfa_low <= span. */
    const uintptr_t cfa_low = low + sizeof(uintptr_t);
    void **out = buffer, **end = buffer + size;

    if ((sp & 7) != 0 || sp - low > span)
        end = buffer; /* the slow path takes it */
    /* After the first step every frame is a return address: a rule kept
     * has the simple shape, which no signal frame has. */
    while (out < end) {
        const struct memo_rule *rule = slot_for(layout, bits, key);
        if (rule->key != key)
            break;
        unsigned flags = rule->flags;
        uintptr_t cfa, next_pc;
        if ((flags & ~RULE_RBP_SAVED) == 0) {
            cfa = sp + (uintptr_t)(intptr_t)rule->cfa_offset;
            if (cfa - cfa_low > span)
                break;
            next_pc = unwind_arch_strip(*(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)rule->ra_offset));
            if (next_pc == 0)
                break;
            if (flags & RULE_RBP_SAVED) {
                rbp = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)rule->rbp_offset);
                rbp_known = 1;
            }
        } else {
            if (flags & RULE_OUTERMOST) {
                r->ended = 1;
                break;
            }
            if ((flags & RULE_RBP_BASED) && !rbp_known)
                break;
            cfa = ((flags & RULE_RBP_BASED) ? rbp : sp) + (uintptr_t)(intptr_t)rule->cfa_offset;
            uintptr_t at = cfa + (uintptr_t)(intptr_t)rule->ra_offset;
            if (at - low > span || (at & 7) != 0 || cfa <= sp || (cfa & 7) != 0)
                break;
            next_pc = unwind_arch_strip(*(const uintptr_t *)at);
            if (next_pc == 0)
                break;
            if (flags & RULE_RBP_SAVED) {
                uintptr_t rbp_at = cfa + (uintptr_t)(intptr_t)rule->rbp_offset;
                if (rbp_at - low > span || (rbp_at & 7) != 0)
                    break;
                rbp = *(const uintptr_t *)rbp_at;
                rbp_known = 1;
            }
        }
        pc = next_pc;
        sp = cfa;
        key = pc;
        *out++ = (void *)pc;
    }
    r->pc = pc;
    r->sp = sp;
    r->rbp = rbp;
    r->rbp_known = rbp_known;
    return (int)(out - buffer);
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
        .pc = walk->registers[PC], .sp = walk->registers[CFI_SP],
        .rbp = walk->registers[CFI_FP], .rbp_known = (walk->known >> CFI_FP) & 1,
    };
    uintptr_t key = walk->pc_is_exact ? r.pc | EXACT_KEY : r.pc;
    int stored = replay(layout, &r, key, low, span, buffer, size);
    *ended = r.ended;
    if (stored > 0) {
        walk->registers[PC] = r.pc;
        walk->registers[CFI_SP] = r.sp;
        walk->registers[CFI_FP] = r.rbp;
        walk->known = CFI_BIT(PC) | CFI_BIT(CFI_SP) | (r.rbp_known ? CFI_BIT(CFI_FP) : 0);
        walk->pc_is_exact = 0;
        walk->steps += stored;
        walk->cached_steps += stored;
    }
    return stored;
}

int walk_memo_replay_caller(struct backtrace_memo *memo, struct memo_registers *r,
                            void **buffer, int size)
{
    struct memory_range stack;
    r->ended = 0;
    if (memo == NULL || !stack_walk_thread_stack(r->sp, &stack))
        return 0;
    struct memo_layout *layout = (struct memo_layout *)memo;
    if (!memo_ready(layout))
        memo_make_ready(layout);
    uintptr_t low, span;
    readable_words(stack, &low, &span);
    return replay(layout, r, r->pc, low, span, buffer, size);
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
