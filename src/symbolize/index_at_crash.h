/* index_at_crash.h: the snapshot the first reader builds, when the load
 * left the index to the crash (issue 26). */
#ifndef EXECINFO_EX_INDEX_AT_CRASH_H
#define EXECINFO_EX_INDEX_AT_CRASH_H

#include <stddef.h>
#include <stdint.h>

#include "debug_roots.h"
#include "index.h"
#include "../base/options.h"

/* What the load records, in the normal world, for a build in a signal
 * handler: where the loader's list is, what the environment said. */
struct index_at_crash_setup {
    const void *loader;                 /* &_r_debug */
    uintptr_t program_headers;          /* AT_PHDR */
    size_t program_header_count;        /* AT_PHNUM */
    uintptr_t vdso;                     /* AT_SYSINFO_EHDR, 0: none */
    const struct options *options;      /* the index's, for the cache keys */
    unsigned euid;
    /* Copied at load, as a load-built index used them (a program may
     * rewrite argv and environ for its title), joined without printf
     * (path_join.h): a load then runs no printf, whose code is pages of
     * libc no other part of a small program touches. Packed in TEXT:
     * the load writes a few dozen bytes, one page. */
    const char *program_name;           /* what glibc prints for the program */
    const char *cache_directory;        /* "": no cache */
    const char *roots;                  /* the debug roots (debug_roots.h) */
    char text[OPTIONS_PATH_MAX + 64 + DEBUG_FILE_ROOTS_MAX + 4096];
};

/* The load leaves the index to its first reader with
 * index_leave_to_reader(SETUP) (index.h): from then on, a reader that
 * finds no snapshot published builds one (index_acquire). */

/* The snapshot of the modules the loader lists now, each with the cache
 * file a load would have found (checked at its first use) or unread
 * (named from its file, and by the second stage); published unless
 * another was first. Returns the published snapshot, or NULL (not left
 * to a reader, a build already tried, or no module found). Signal-safe:
 * static memory, the loader's list read with memory_read, a stat of each
 * module's file and of its cache file. Called by index_acquire. */
const struct index_snapshot *index_at_crash_build(void);

#endif
