/* walk_memo.h: take each frame's rule from the walk before. */
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
    int old_count, cursor;           /* cursor: the old frame predicted next */
    int current_recorded;            /* the walk's frame is fresh[fresh_count - 1] */
    struct memo_frame *fresh;
    int fresh_count;
    unsigned generation;
};

/* Start a pass over MEMO (may be NULL). Signal-safe. */
void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo);

/* stack_walk_step, with the memo's rule when the memo predicts the frame:
 * the same result, cheaper. Returns 1 with the caller's pc in *PC, or 0 at
 * the end. Signal-safe. */
int walk_memo_step(struct memo_pass *pass, struct stack_walk *walk, uintptr_t *pc);

/* While the memo predicts the walk's frames: step through up to SIZE of
 * them at once, storing their pcs into BUFFER, as that many walk_memo_step
 * calls would. Returns how many. Signal-safe. */
int walk_memo_replay_run(struct memo_pass *pass, struct stack_walk *walk, void **buffer,
                         int size);

/* Keep this walk's frames for the next one. Signal-safe. */
void walk_memo_end(struct memo_pass *pass);

#endif
