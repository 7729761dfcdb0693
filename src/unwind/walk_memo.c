/* walk_memo.c: a walk that checks, rather than unwinds, the frames it
 * shares with the walk before it.
 * World: signal-safe (memory reads through stack_walk_read only).
 *
 * An allocator that captures a stack at every malloc walks nearly the same
 * frames again and again: main, the event loop, the interpreter; only the
 * innermost few change. The memo keeps, per frame of the last walk, the
 * frame's state (pc, sp, rbp) and where the step to its caller read the
 * caller's pc and rbp (offsets from the caller's sp, the simple rule
 * shape of rule_cache.h). When a walk reaches a state the memo has, the
 * next frame is the memo's next one exactly when those stack words still
 * hold the values the memo recorded: a step is a function of the state,
 * of the rule for the pc (unchanged while the rule cache's generation is)
 * and of the words it reads. So each shared frame costs one or two checked
 * reads and compares instead of a rule lookup, with the same result. A
 * check that fails falls back to plain stepping from that frame.
 *
 * Only the simple shape is replayed; any other step (a signal frame, an
 * expression) ends what the memo can vouch for. Two halves of the memo
 * alternate, so a walk records into one while it reads the other. */
#include "walk_memo.h"
#include "rule_cache.h"
#include "execinfo_ex.h"

#include <string.h>

#define MEMO_MAGIC 0x6f6d656du   /* "memo" */
#define MEMO_FRAMES 63

struct memo_frame {
    uintptr_t pc, sp, rbp;
    uint8_t rbp_known;
    uint8_t stepped;           /* the step to the next frame was simple */
    uint8_t rbp_saved;
    uint8_t unused;
    int16_t ra_offset;         /* the next frame's pc is at next sp + this */
    int16_t rbp_offset;        /* and its rbp, if saved */
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

/* Append the state the walk has just stepped to, and how it got there. */
static void record(struct memo_pass *pass, const struct stack_walk *walk)
{
    if (pass->fresh_count >= MEMO_FRAMES)
        return;
    if (pass->fresh_count > 0) {
        struct memo_frame *before = &pass->fresh[pass->fresh_count - 1];
        before->stepped = walk->last_step_simple && fits_16(walk->last_ra_offset) &&
                          fits_16(walk->last_rbp_offset);
        before->rbp_saved = (uint8_t)walk->last_rbp_saved;
        before->ra_offset = (int16_t)walk->last_ra_offset;
        before->rbp_offset = (int16_t)walk->last_rbp_offset;
    }
    int rbp_known = (walk->known >> CFI_RBP) & 1;
    uintptr_t pc = walk->registers[CFI_RETURN_ADDRESS], sp = walk->registers[CFI_RSP];
    uintptr_t rbp = rbp_known ? walk->registers[CFI_RBP] : 0;
    /* Scalar loads: the walker has just stored these registers a word at a
     * time, and the vector load GCC's -O2 would merge two of them into
     * stalls on store forwarding (it was most of this function's time). */
    __asm__("" : "+r"(pc), "+r"(sp), "+r"(rbp));
    pass->fresh[pass->fresh_count++] = (struct memo_frame){
        .pc = pc, .sp = sp, .rbp = rbp, .rbp_known = (uint8_t)rbp_known,
    };
}

/* Does the walk stand where the last walk stood? Frames are in sp order,
 * and so are the walk's steps: the cursor only moves forward. */
static void match(struct memo_pass *pass, const struct stack_walk *walk)
{
    uintptr_t sp = walk->registers[CFI_RSP];
    while (pass->cursor < pass->old_count && pass->old[pass->cursor].sp < sp)
        pass->cursor++;
    if (pass->cursor >= pass->old_count || walk->pc_is_exact)
        return;
    const struct memo_frame *frame = &pass->old[pass->cursor];
    int rbp_known = (walk->known >> CFI_RBP) & 1;
    pass->replaying = frame->sp == sp && frame->pc == walk->registers[CFI_RETURN_ADDRESS] &&
                      frame->rbp_known == rbp_known &&
                      (!rbp_known || frame->rbp == walk->registers[CFI_RBP]);
    pass->run_start = pass->cursor;
}

/* The memo's next frame, if the words its step read still hold. The
 * walk itself is left at the frame where the run began (see end_run). */
static int replay(struct memo_pass *pass, struct stack_walk *walk)
{
    const struct memo_frame *here = &pass->old[pass->cursor];
    int replayed = pass->cursor - pass->run_start;
    if (!here->stepped || pass->cursor + 1 >= pass->old_count ||
        pass->fresh_count + replayed >= MEMO_FRAMES)
        return 0;
    const struct memo_frame *next = here + 1;
    uintptr_t pc, rbp;
    if (stack_walk_read_fast(walk, next->sp + (uintptr_t)(intptr_t)here->ra_offset, &pc) < 0 ||
        pc != next->pc)
        return 0;
    if (here->rbp_saved &&
        (stack_walk_read_fast(walk, next->sp + (uintptr_t)(intptr_t)here->rbp_offset, &rbp) < 0 ||
         rbp != next->rbp))
        return 0;
    pass->cursor++;
    return 1;
}

/* A run of replayed frames ends: record them as they were (a frame's step
 * depends on its pc only, so its rule is still right) and bring the walk
 * to the last of them, from where it may go on stepping. */
static void end_run(struct memo_pass *pass, struct stack_walk *walk)
{
    int replayed = pass->cursor - pass->run_start;
    pass->replaying = 0;
    if (replayed == 0)
        return;
    memcpy(&pass->fresh[pass->fresh_count - 1], &pass->old[pass->run_start],
           (size_t)(replayed + 1) * sizeof(struct memo_frame));
    pass->fresh_count += replayed;
    if (walk == NULL)
        return;
    const struct memo_frame *last = &pass->old[pass->cursor];
    walk->registers[CFI_RETURN_ADDRESS] = last->pc;
    walk->registers[CFI_RSP] = last->sp;
    walk->registers[CFI_RBP] = last->rbp;
    walk->known = 1u << CFI_RETURN_ADDRESS | 1u << CFI_RSP |
                  (last->rbp_known ? 1u << CFI_RBP : 0);
    walk->pc_is_exact = 0;
    walk->steps += replayed;
}

int walk_memo_step(struct memo_pass *pass, struct stack_walk *walk, uintptr_t *pc)
{
    if (pass->memo != NULL && pass->replaying) {
        if (replay(pass, walk)) {
            *pc = pass->old[pass->cursor].pc;
            return 1;
        }
        end_run(pass, walk);
    }
    if (stack_walk_step(walk) <= 0)
        return 0;
    if (pass->memo != NULL) {
        record(pass, walk);
        match(pass, walk);
    }
    *pc = walk->registers[CFI_RETURN_ADDRESS];
    return 1;
}

void walk_memo_end(struct memo_pass *pass)
{
    struct memo_layout *layout = pass->memo;
    if (layout == NULL)
        return;
    if (pass->replaying)
        end_run(pass, NULL);
    unsigned fresh = !(layout->current & 1);
    layout->count[fresh] = (uint16_t)pass->fresh_count;
    layout->generation = pass->generation;
    layout->current = fresh;
    layout->magic = MEMO_MAGIC;
}
