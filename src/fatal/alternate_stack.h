/* alternate_stack.h: an alternate signal stack for every thread, so that
 * a stack overflow still gets its report. */
#ifndef EXECINFO_EX_ALTERNATE_STACK_H
#define EXECINFO_EX_ALTERNATE_STACK_H

/* Give the calling thread, a thread the process created, an alternate
 * signal stack (64 KiB, or 4 x MINSIGSTKSZ, and a guard page) unless it
 * has one; ours is freed when the thread exits. Normal world. */
void alternate_stack_give_this_thread(void);

/* The same for the thread that installs the handler, which may be the
 * process's first: its stack lasts as long as the process, and is made
 * with nothing written and nothing to free. Normal world. */
void alternate_stack_give_installing_thread(void);

/* From now on, threads created with pthread_create get one as they start
 * (shared library only: it interposes pthread_create). Normal world. */
void alternate_stack_for_new_threads(int enable);

#endif
