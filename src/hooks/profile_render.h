/* profile_render.h: a heap profile's facts (profile_facts.h) in the
 * formats people's viewers read. */
#ifndef EXECINFO_EX_PROFILE_RENDER_H
#define EXECINFO_EX_PROFILE_RENDER_H

#include "profile_facts.h"

/* pprof's profile.proto (go tool pprof, speedscope, Pyroscope...), to FD:
 * gzipped if COMPRESSED. Sample types: the six profile values, in-use
 * bytes the default. Returns 0 or a negative errno. World: normal. */
int profile_write_pprof(const struct heap_profile *profile, int fd, int compressed);

/* Folded stacks, one "outer;...;inner VALUE" line per sample whose VALUE
 * is not 0 (flamegraph.pl, speedscope, inferno): inlined functions are
 * frames of their own. Returns 0 or a negative errno. World: normal. */
int profile_write_folded(const struct heap_profile *profile, int fd, enum profile_value value);

#endif
