/* walk_memo.c: a walk that takes each frame's rule from the walk before
 * it instead of looking it up.
 * World: signal-safe (memory reads through stack_walk_read only).
 *
 * An allocator that captures a stack at every malloc walks nearly the same
 * frames again and again: its own, then main, the event loop, the
 * interpreter; only a few in between change. The memo keeps, per frame of
 * the last walk, the frame's pc and sp and the rule that stepped out of
 * it (the simple shape of rule_cache.h). A rule depends on the pc alone
 * (while the rule cache's generation holds: no module was unloaded), so
 * when the walk stands on the pc the memo predicts, it applies the memo's
 * rule to its own registers and reads the caller's frame from the stack
 * as any step would: the same result, without the hash, the shared cache
 * and its seqlock. A frame the memo does not predict is stepped as usual;
 * the walk then looks for its place in the memo by sp (frames are in sp
 * order), so that the outer frames shared with the last walk, which sit at
 * the same addresses, are predicted again.
 *
 * Two halves of the memo alternate, so a walk records into one while it
 * reads the other. */
#include "walk_memo.h"
#include "execinfo_ex.h"

#define MEMO_MAGIC 0x6f6d656du   /* "memo" */
#define MEMO_FRAMES 63
#define PC CFI_RETURN_ADDRESS

struct memo_frame {
    uintptr_t pc, sp;          /* the frame as the walk reached it */
    int32_t cfa_offset;        /* the rule that stepped out of it, if has_rule */
    int16_t ra_offset, rbp_offset;
    uint8_t has_rule, cfa_is_rbp, rbp_saved, unused;
};

struct memo_layout {
    uint32_t magic;
    uint32_t generation;
    uint32_t current;          /* the half the last walk wrote */
    uint16_t count[2];
    struct memo_frame frames[2][MEMO_FRAMES];
};

_Static_assert(sizeof(struct memo_layout) <= sizeof(struct backtrace_memo),
               "struct backtrace_memo is too small for the memo");

void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo)
{
    *pass = (struct memo_pass){ .memo = (struct memo_layout *)memo };
    if (memo == NULL)
        return;
    struct memo_layout *layout = pass->memo;
    pass->generation = rule_cache_generation();
    unsigned current = layout->current & 1;
    if (layout->magic == MEMO_MAGIC && layout->generation == pass->generation) {
        pass->old = layout->frames[current];
        pass->old_count = layout->count[current] <= MEMO_FRAMES ? layout->count[current] : 0;
    }
    pass->fresh = layout->frames[!current];
}

static int fits_16(int32_t value)
{
    return value >= INT16_MIN && value <= INT16_MAX;
}

/* The frame the walk stands on, as the memo knows it, or NULL: the next
 * one in sequence, else the one at the walk's sp. */
static const struct memo_frame *predicted(struct memo_pass *pass, const struct stack_walk *walk)
{
    uintptr_t pc = walk->registers[PC], sp = walk->registers[CFI_RSP];
    if (walk->pc_is_exact)
        return NULL;
    if (pass->cursor < pass->old_count && pass->old[pass->cursor].pc == pc)
        return &pass->old[pass->cursor];
    while (pass->cursor < pass->old_count && pass->old[pass->cursor].sp < sp)
        pass->cursor++;
    if (pass->cursor < pass->old_count && pass->old[pass->cursor].pc == pc)
        return &pass->old[pass->cursor];
    return NULL;
}

/* Step out of the current frame with FRAME's rule, as step_with_rule in
 * stack_walk.c does with a rule from the cache. */
static int apply(struct stack_walk *walk, const struct memo_frame *frame)
{
    int rbp_known = (walk->known >> CFI_RBP) & 1;
    if (!frame->has_rule || (frame->cfa_is_rbp && !rbp_known))
        return 0;
    uintptr_t sp = walk->registers[CFI_RSP], rbp = walk->registers[CFI_RBP];
    uintptr_t cfa = (frame->cfa_is_rbp ? rbp : sp) + (uintptr_t)(intptr_t)frame->cfa_offset;
    uintptr_t pc;
    if (stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)frame->ra_offset, &pc) < 0)
        return 0;
    if (frame->rbp_saved &&
        stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)frame->rbp_offset, &rbp) < 0)
        return 0;
    if (cfa <= sp || pc == 0)
        return 0; /* a stack must grow towards its base */
    walk->registers[PC] = pc;
    walk->registers[CFI_RSP] = cfa;
    walk->registers[CFI_RBP] = rbp;
    walk->known = 1u << PC | 1u << CFI_RSP | (frame->rbp_saved || rbp_known ? 1u << CFI_RBP : 0);
    walk->steps++;
    return 1;
}

/* The step out of the frame last recorded was RULE (NULL: not simple). */
static void record_rule(struct memo_pass *pass, const struct simple_rule *rule)
{
    if (!pass->current_recorded)
        return;
    struct memo_frame *frame = &pass->fresh[pass->fresh_count - 1];
    frame->has_rule = rule != NULL && !rule->outermost && fits_16(rule->ra_offset) &&
                      fits_16(rule->rbp_offset);
    if (!frame->has_rule)
        return;
    frame->cfa_offset = rule->cfa_offset;
    frame->ra_offset = (int16_t)rule->ra_offset;
    frame->rbp_offset = (int16_t)rule->rbp_offset;
    frame->cfa_is_rbp = rule->cfa_register == CFI_RBP;
    frame->rbp_saved = rule->rbp_saved;
}

/* Copy the rule of a memo frame to the frame last recorded. */
static void record_copied_rule(struct memo_pass *pass, const struct memo_frame *from)
{
    if (!pass->current_recorded)
        return;
    struct memo_frame *frame = &pass->fresh[pass->fresh_count - 1];
    frame->cfa_offset = from->cfa_offset;
    frame->ra_offset = from->ra_offset;
    frame->rbp_offset = from->rbp_offset;
    frame->has_rule = 1;
    frame->cfa_is_rbp = from->cfa_is_rbp;
    frame->rbp_saved = from->rbp_saved;
}

/* The frame the walk has just stepped to. */
static void record_frame(struct memo_pass *pass, const struct stack_walk *walk)
{
    pass->current_recorded = pass->fresh_count < MEMO_FRAMES;
    if (!pass->current_recorded)
        return;
    struct memo_frame *frame = &pass->fresh[pass->fresh_count++];
    frame->pc = walk->registers[PC];
    frame->sp = walk->registers[CFI_RSP];
    frame->has_rule = 0;
}

/* One step with the memo's rule, if it predicts the current frame. */
static int step_predicted(struct memo_pass *pass, struct stack_walk *walk)
{
    const struct memo_frame *frame = predicted(pass, walk);
    if (frame == NULL || !apply(walk, frame))
        return 0;
    record_copied_rule(pass, frame);
    record_frame(pass, walk);
    pass->cursor = (int)(frame - pass->old) + 1;
    return 1;
}

/* step_predicted in a loop, with the walk's registers and the memo's
 * cursors kept in locals: the hot path of a capture from a deep stack. */
int walk_memo_replay_run(struct memo_pass *pass, struct stack_walk *walk, void **buffer,
                         int size)
{
    if (pass->memo == NULL || walk->pc_is_exact)
        return 0;
    uintptr_t pc = walk->registers[PC], sp = walk->registers[CFI_RSP];
    uintptr_t rbp = walk->registers[CFI_RBP];
    int rbp_known = (walk->known >> CFI_RBP) & 1;
    int cursor = pass->cursor, fresh_count = pass->fresh_count;
    int recorded = pass->current_recorded, stored = 0;
    while (stored < size && cursor < pass->old_count) {
        const struct memo_frame *frame = &pass->old[cursor];
        if (frame->pc != pc || !frame->has_rule || (frame->cfa_is_rbp && !rbp_known))
            break;
        uintptr_t cfa = (frame->cfa_is_rbp ? rbp : sp) + (uintptr_t)(intptr_t)frame->cfa_offset;
        uintptr_t next_pc, next_rbp = rbp;
        if (stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)frame->ra_offset, &next_pc) < 0 ||
            (frame->rbp_saved &&
             stack_walk_read_fast(walk, cfa + (uintptr_t)(intptr_t)frame->rbp_offset,
                                  &next_rbp) < 0) ||
            cfa <= sp || next_pc == 0)
            break;
        if (recorded) {
            struct memo_frame *here = &pass->fresh[fresh_count - 1];
            *here = *frame;
            here->sp = sp;
        }
        recorded = fresh_count < MEMO_FRAMES;
        if (recorded)
            pass->fresh[fresh_count++] = (struct memo_frame){ .pc = next_pc, .sp = cfa };
        rbp_known |= frame->rbp_saved;
        pc = next_pc;
        sp = cfa;
        rbp = next_rbp;
        cursor++;
        buffer[stored++] = (void *)pc;
    }
    if (stored > 0) {
        walk->registers[PC] = pc;
        walk->registers[CFI_RSP] = sp;
        walk->registers[CFI_RBP] = rbp;
        walk->known = 1u << PC | 1u << CFI_RSP | (rbp_known ? 1u << CFI_RBP : 0);
        walk->steps += stored;
        pass->cursor = cursor;
        pass->fresh_count = fresh_count;
        pass->current_recorded = recorded;
    }
    return stored;
}

int walk_memo_step(struct memo_pass *pass, struct stack_walk *walk, uintptr_t *pc)
{
    if (pass->memo == NULL) {
        if (stack_walk_step(walk) <= 0)
            return 0;
    } else if (!step_predicted(pass, walk)) {
        /* A frame stood on exactly (after a signal frame) took its rule at
         * pc, not pc - 1: not the rule a return address there would get. */
        int exact = walk->pc_is_exact;
        if (stack_walk_step(walk) <= 0)
            return 0;
        record_rule(pass, walk->last_step_simple && !exact ? &walk->last_rule : NULL);
        record_frame(pass, walk);
    }
    *pc = walk->registers[PC];
    return 1;
}

void walk_memo_end(struct memo_pass *pass)
{
    struct memo_layout *layout = pass->memo;
    if (layout == NULL)
        return;
    unsigned fresh = !(layout->current & 1);
    layout->count[fresh] = (uint16_t)pass->fresh_count;
    layout->generation = pass->generation;
    layout->current = fresh;
    layout->magic = MEMO_MAGIC;
}
