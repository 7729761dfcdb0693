/* frame_json.h: frames as JSON objects, for the JSON crash report and
 * backtrace_print_fd(BACKTRACE_JSON). */
#ifndef EXECINFO_EX_FRAME_JSON_H
#define EXECINFO_EX_FRAME_JSON_H

#include <stdint.h>

#include "index.h"
#include "resolved_names.h"
#include "../base/text_out.h"

/* [{"address":"0x...","module":...,"function":...,"mangled":...,"offset":...,
 * "file":...,"line":...[,"inlined":[{"function":...,"file":...,"line":...},
 * ...]]},...] one frame a line ("function" demangled, "mangled" the
 * symbol's own name, both null without a symbol); an exact pc
 * (lookup_frame_is_exact of EXACT and FLAGS) looked up by itself, a return
 * address at address - 1 (the call). Signal-safe. */
void frame_json_array(struct text_out *out, const struct index_snapshot *snapshot,
                      void *const *frames, const unsigned char *exact, int count, int flags);

/* The same, with what the second stage RESOLVED (may be NULL) laid over
 * the index's names (resolved_names.h). Signal-safe. */
void frame_json_array_resolved(struct text_out *out, const struct index_snapshot *snapshot,
                               const struct resolved_names *resolved, void *const *frames,
                               const unsigned char *exact, int count, int flags);

#endif
