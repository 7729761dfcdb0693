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
/* An exact pc's key: no x86_64 user address has the top bit. */
#define EXACT_KEY ((uintptr_t)1 << 63)

/* The rule of one frame: a return address, or an exact pc | EXACT_KEY. */
struct memo_rule {
    uintptr_t key;               /* 0: empty */
    int32_t cfa_offset;
    int8_t ra_offset, rbp_offset;
    uint8_t flags;
    uint8_t unused;
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

static int fits_8(int32_t value)
{
    return value >= INT8_MIN && value <= INT8_MAX;
}

/* Keep RULE, which stepped out of the frame of KEY. */
static void remember(struct memo_layout *layout, uintptr_t key, const struct simple_rule *rule)
{
    if (rule->outermost || !fits_8(rule->ra_offset) || !fits_8(rule->rbp_offset))
        return;
    struct memo_rule *slot = slot_for(layout, key);
    slot->key = key;
    slot->cfa_offset = rule->cfa_offset;
    slot->ra_offset = (int8_t)rule->ra_offset;
    slot->rbp_offset = (int8_t)rule->rbp_offset;
    slot->flags = (rule->cfa_register == CFI_RBP ? RULE_RBP_BASED : 0) |
                  (rule->rbp_saved ? RULE_RBP_SAVED : 0);
}

/* stack_walk_read_fast with the stack's bounds in locals (the stores of
 * the loop below could alias the walk's). */
static inline int read_word(struct stack_walk *walk, uintptr_t low, uintptr_t last,
                            uintptr_t address, uintptr_t *value)
{
    if (address % sizeof(uintptr_t) == 0 && address >= low && address <= last) {
        *value = *(const uintptr_t *)address;
        return 0;
    }
    return stack_walk_read(walk, address, value);
}

/* Step through the frames whose rules the memo has, with the registers in
 * locals: the hot path of a capture. Returns how many pcs it stored. */
static int run_known(struct memo_layout *layout, struct stack_walk *walk, void **buffer, int size)
{
    /* [low, last]: where a word may be read at once; empty if the stack's
     * mapping is not known yet. */
    const struct memory_range stack = walk->readable[0];
    uintptr_t low = UINTPTR_MAX, last = 0;
    if (stack.high >= sizeof(uintptr_t) && stack.high - sizeof(uintptr_t) >= stack.low) {
        low = stack.low;
        last = stack.high - sizeof(uintptr_t);
    }
    uintptr_t pc = walk->registers[PC], sp = walk->registers[CFI_RSP];
    uintptr_t rbp = walk->registers[CFI_RBP];
    uintptr_t key = walk->pc_is_exact ? pc | EXACT_KEY : pc;
    int rbp_known = (walk->known >> CFI_RBP) & 1, stored = 0;

    /* After the first step every frame is a return address: a rule kept
     * has the simple shape, which no signal frame has. */
    for (; stored < size; key = pc) {
        const struct memo_rule *rule = slot_for(layout, key);
        int rbp_based = rule->flags & RULE_RBP_BASED;
        if (rule->key != key || (rbp_based && !rbp_known))
            break;
        uintptr_t cfa = (rbp_based ? rbp : sp) + (uintptr_t)(intptr_t)rule->cfa_offset;
        uintptr_t next_pc, next_rbp = rbp;
        if (read_word(walk, low, last, cfa + (uintptr_t)(intptr_t)rule->ra_offset, &next_pc) < 0 ||
            ((rule->flags & RULE_RBP_SAVED) &&
             read_word(walk, low, last, cfa + (uintptr_t)(intptr_t)rule->rbp_offset,
                       &next_rbp) < 0) ||
            cfa <= sp || next_pc == 0)
            break; /* as a step with this rule would: the slow path says why */
        rbp_known |= (rule->flags & RULE_RBP_SAVED) != 0;
        pc = next_pc;
        sp = cfa;
        rbp = next_rbp;
        buffer[stored++] = (void *)pc;
    }
    if (stored > 0) {
        walk->registers[PC] = pc;
        walk->registers[CFI_RSP] = sp;
        walk->registers[CFI_RBP] = rbp;
        walk->known = 1u << PC | 1u << CFI_RSP | (rbp_known ? 1u << CFI_RBP : 0);
        walk->pc_is_exact = 0;
        walk->steps += stored;
    }
    return stored;
}

int walk_memo_next(struct memo_pass *pass, struct stack_walk *walk, void **buffer, int size)
{
    struct memo_layout *layout = pass->memo;
    if (layout != NULL) {
        int stored = run_known(layout, walk, buffer, size);
        if (stored > 0)
            return stored;
    }
    uintptr_t from = walk->pc_is_exact ? walk->registers[PC] | EXACT_KEY : walk->registers[PC];
    if (stack_walk_step(walk) <= 0)
        return 0;
    if (layout != NULL && walk->last_step_simple)
        remember(layout, from, &walk->last_rule);
    buffer[0] = (void *)walk->registers[PC];
    return 1;
}

void walk_memo_end(struct memo_pass *pass)
{
    (void)pass; /* the rules were kept as they were found */
}
