/* debug_roots.h: the debug roots, the directories that hold separate
 * debug files. */
#ifndef EXECINFO_EX_DEBUG_ROOTS_H
#define EXECINFO_EX_DEBUG_ROOTS_H

#include <stddef.h>

/* The directories that hold debug files, searched in this order, as one
 * ':'-separated list into OUT: the roots of EXECINFO_EX_DEBUG_ROOT (itself
 * a ':'-separated list), then the system's, /usr/lib/debug (or
 * EXECINFO_EX_SYSTEM_DEBUG_ROOT, empty for none: tests and benchmarks).
 * The list is part of the index cache's key. Returns 0, or -ENAMETOOLONG
 * when it does not fit (OUT is then the system root alone). */
#define DEBUG_FILE_ROOTS_MAX 4096
int debug_file_roots(char *out, size_t size);

#endif
