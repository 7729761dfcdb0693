/* walk_memo.h: a thread's own cache of frame rules, for repeated walks. */
#ifndef EXECINFO_EX_WALK_MEMO_H
#define EXECINFO_EX_WALK_MEMO_H

#include "stack_walk.h"

struct backtrace_memo;
struct memo_layout;

/* One walk's use of a memo (walk_memo.c). */
struct memo_pass {
    struct memo_layout *memo;        /* NULL: plain walking */
};

/* Start a pass over MEMO (may be NULL). Signal-safe. */
void walk_memo_begin(struct memo_pass *pass, struct backtrace_memo *memo);

/* The next frames: a run of those whose rules the memo has, or one step
 * (whose rule the memo then keeps). Stores up to SIZE (at least 1) pcs
 * into BUFFER and returns how many, or 0 at the end of the stack: the
 * frames a walk without the memo gives. Signal-safe. */
int walk_memo_next(struct memo_pass *pass, struct stack_walk *walk, void **buffer, int size);

/* The end of a pass. Signal-safe. */
void walk_memo_end(struct memo_pass *pass);

#endif
