/* state.h: what free needs from a malloc_set_state() restore (state.c). */
#ifndef EXECINFO_EX_STATE_H
#define EXECINFO_EX_STATE_H

#include <stdint.h>

/* 1 once a state was restored: a pointer the hook layer does not know is
 * then handed to glibc as it is, not reported. */
int state_restored(void);

/* A restored block was freed: it is no longer live in a later blob. */
void state_forget(uintptr_t address);

#endif
