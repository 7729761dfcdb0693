/* walk_memo.h: replay the frames a walk shares with the previous one. */
#ifndef EXECINFO_EX_WALK_MEMO_H
#define EXECINFO_EX_WALK_MEMO_H

#include "stack_walk.h"

struct backtrace_memo;
struct memo_frame;

/* One walk's use of a memo: what the last walk left (old), what this one
 * records (fresh). */
struct memo_pass {
    struct memo_layout *memo;        /* NULL: plain walking */
    const struct memo_frame *old;
    int old_count, cursor, replaying;
    int run_start;                   /* old frame where the replay began */
    struct memo_frame *fresh;
    int fresh_count;
    unsigned generation;
};

/* Start a pass over MEMO (may be NULL). Signal-safe. */
void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo);

/* stack_walk_step, or the next frame of the memo when the memo's frames
 * still hold: the same result, cheaper. Returns 1 with the caller's pc
 * in *PC, or 0 at the end; WALK's registers are those of *PC's frame only
 * after a plain step (a replay moves them when it ends). Signal-safe. */
int walk_memo_step(struct memo_pass *pass, struct stack_walk *walk, uintptr_t *pc);

/* Keep this walk's frames for the next one. Signal-safe. */
void walk_memo_end(struct memo_pass *pass);

#endif
