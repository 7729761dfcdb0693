/* debug_roots.c: where separate debug files are looked for, in order.
 * World: normal (secure_getenv). Apart from debug_file.c, which
 * needs libelf: the index cache's key has the list too. */
#define _GNU_SOURCE
#include "debug_roots.h"
#include "path_join.h"

#include <stdlib.h>

/* EXECINFO_EX_DEBUG_ROOT's roots, then the system's: a user's root adds
 * to /usr/lib/debug, it does not hide libc's debug file there.
 * EXECINFO_EX_SYSTEM_DEBUG_ROOT replaces the system's (empty: none), for
 * a test or a benchmark that plays a machine without one. Read at each
 * call: a test changes them between builds. */
int debug_file_roots(char *out, size_t size)
{
    return debug_roots_join(secure_getenv("EXECINFO_EX_DEBUG_ROOT"),
                            secure_getenv("EXECINFO_EX_SYSTEM_DEBUG_ROOT"), out, size);
}
