/* profile_build.h: a heap_snapshot as the hooks library's heap profile
 * (src/hooks/profile_facts.h), so that execinfo_ex_leaks writes pprof and
 * folded stacks with the very writers the hooks library uses. */
#ifndef EXECINFO_EX_LEAKS_PROFILE_BUILD_H
#define EXECINFO_EX_LEAKS_PROFILE_BUILD_H

#include "heap_snapshot.h"
#include "hooks/profile_facts.h"
#include "symbolize.h"

/* One sample per stack that allocated (alloc_*: every allocation a trace
 * made from it; in use: its live blocks), one location per frame, named
 * by SYMBOLIZER. A state blob knows only live blocks: its alloc_* values
 * are its in-use ones. Peak values are 0 (a trace has no clock of live
 * bytes worth the cost here). Returns 0 or -ENOMEM. Normal world. */
int profile_build(struct heap_profile *profile, const struct heap_snapshot *heap,
                  struct symbolizer *symbolizer);
void profile_build_free(struct heap_profile *profile);

#endif
