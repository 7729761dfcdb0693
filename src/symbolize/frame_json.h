/* frame_json.h: frames as JSON objects, for the JSON crash report and
 * backtrace_print_fd(BACKTRACE_JSON). */
#ifndef EXECINFO_EX_FRAME_JSON_H
#define EXECINFO_EX_FRAME_JSON_H

#include <stdint.h>

#include "index.h"
#include "../base/text_out.h"

/* [{"address":"0x...","module":...,"function":...,"offset":...,"file":...,
 * "line":...},...] one frame a line; frame 0 looked up exactly when
 * FIRST_IS_PC, the others at address - 1 (the call). Signal-safe. */
void frame_json_array(struct text_out *out, const struct index_snapshot *snapshot,
                      void *const *frames, int count, int first_is_pc);

#endif
