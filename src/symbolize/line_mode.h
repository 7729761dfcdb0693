/* line_mode.h: which lines the index reads for a module, by the options.
 * Pure, so that the crash handler's own module list (index_at_crash.c)
 * asks the index cache for the files a load would have asked for. */
#ifndef EXECINFO_EX_LINE_MODE_H
#define EXECINFO_EX_LINE_MODE_H

#include "module_list.h"
#include "../base/options.h"

/* 0: no lines; else LINE_MODE_LINES with LINE_FLAGS (module_data.h) above
 * it: lines=own reads a module's own line table only, but the program's
 * separate debug file too (as lines=main does). */
#define LINE_MODE_LINES 1
#define LINE_MODE_FLAGS_SHIFT 1
int line_mode_of(const struct options *options, const struct module_info *module);

#endif
