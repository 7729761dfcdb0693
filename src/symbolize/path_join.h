/* path_join.h: the index's paths from the environment's values, joined
 * without printf: a load that leaves the index to the crash only keeps the
 * values, and the crash joins them (index_at_crash.c); a load that builds
 * joins them at once (debug_roots.c, index_cache.c). One rule for both. */
#ifndef EXECINFO_EX_PATH_JOIN_H
#define EXECINFO_EX_PATH_JOIN_H

#include <stddef.h>

/* The debug roots (debug_roots.h) from EXECINFO_EX_DEBUG_ROOT's ADDED and
 * EXECINFO_EX_SYSTEM_DEBUG_ROOT's SYSTEM (either NULL: unset) into OUT.
 * Returns 0, or -ENAMETOOLONG (OUT is then /usr/lib/debug). Pure. */
int debug_roots_join(const char *added, const char *system, char *out, size_t size);

/* The index cache's directory: OPTION_PATH (index_cache=PATH) if not
 * empty, else $XDG_CACHE_HOME/execinfo_ex (XDG absolute), else
 * $HOME/.cache/execinfo_ex (HOME absolute), else /tmp/execinfo_ex-EUID;
 * into PATH (SIZE), and into PARENT (SIZE) the directory to make before
 * it ("" none). Returns 0, or -1 when it does not fit. Pure. */
int cache_directory_join(const char *option_path, const char *xdg, const char *home, unsigned euid,
                         char *path, size_t size, char *parent);

#endif
