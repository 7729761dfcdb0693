/* line_mode.c: which lines the index reads for a module (line_mode.h).
 * World: signal-safe (pure). */
#include "line_mode.h"
#include "module_data.h"

#include <string.h>

/* This library and its hooks library: built with -g here, but not the
 * user's code (their frames are left out of reports), and reading their
 * line tables at every load would double the index's cost with no cache. */
static int is_ours(const struct module_info *module)
{
    uintptr_t here = (uintptr_t)&is_ours;
    const char *name = strrchr(module->file_path, '/');
    name = name != NULL ? name + 1 : module->file_path;
    return (module->start <= here && here < module->end) ||
           strncmp(name, "libexecinfo_ex_hooks.so", 23) == 0;
}

static int wants_lines(const struct options *options, const struct module_info *module)
{
    switch (options->lines) {
    case LINES_ALL: return 1;
    case LINES_OWN: return module->is_main || !is_ours(module);
    case LINES_MAIN: return module->is_main;
    default: return 0;
    }
}

int line_mode_of(const struct options *options, const struct module_info *module)
{
    if (!wants_lines(options, module))
        return 0;
    int flags = options->inlines ? LINE_INLINES : 0;
    if (options->lines == LINES_OWN && !module->is_main)
        flags |= LINE_OWN_TABLE_ONLY;
    return LINE_MODE_LINES | flags << LINE_MODE_FLAGS_SHIFT;
}
