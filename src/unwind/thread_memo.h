/* thread_memo.h: the walk memo that backtrace() and backtrace_ucontext()
 * use without being given one, one a thread, mapped at its first use. */
#ifndef EXECINFO_EX_THREAD_MEMO_H
#define EXECINFO_EX_THREAD_MEMO_H

struct backtrace_memo;
struct thread_memo;

/* The calling thread's memo, held for one capture until
 * thread_memo_give_back: NULL when it is already held (a signal handler
 * that interrupted a capture, or another thread sharing it) or cannot be
 * mapped; the capture then walks without one. Signal-safe, lock-free;
 * the first call of a thread may mmap one page. */
struct thread_memo *thread_memo_take(void);

/* The memo of HELD (not NULL). */
struct backtrace_memo *thread_memo_memo(struct thread_memo *held);

/* The end of the capture that took HELD (may be NULL). Signal-safe. */
void thread_memo_give_back(struct thread_memo *held);

#endif
