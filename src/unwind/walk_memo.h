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

/* Registers of a walk at a return address, for walk_memo_replay_caller:
 * the pc, the stack pointer, rbp and whether it is known; ENDED is set
 * when the walk stopped at the outermost frame. */
struct memo_registers {
    uintptr_t pc, sp, rbp;
    int rbp_known;
    int ended;
};

/* From R (a return address and its frame, on the calling thread's own
 * stack), store the pcs of the callers whose rules MEMO has, up to SIZE,
 * and leave R where the replay stopped: the frames a walk gives, with no
 * struct stack_walk to set up when all are known. 0 when the stack's
 * mapping is not known yet or MEMO is NULL. Signal-safe. */
int walk_memo_replay_caller(struct backtrace_memo *memo, struct memo_registers *r,
                            void **buffer, int size);

/* The end of a pass. Signal-safe. */
void walk_memo_end(struct memo_pass *pass);

#endif
