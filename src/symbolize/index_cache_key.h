/* index_cache_key.h: the name of a module's file in the index cache, and
 * what its header must say. Shared by a load (index_cache.c) and by the
 * crash handler's own module list (index_at_crash.c), which must ask for
 * the very files a load would have found. */
#ifndef EXECINFO_EX_INDEX_CACHE_KEY_H
#define EXECINFO_EX_INDEX_CACHE_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "index_cache_format.h"
#include "module_list.h"

struct cache_key {
    char name[2 * MODULE_BUILD_ID_MAX + 32];
    uint64_t identity[5];
};

/* This library's own build-id, part of every key: data built by other
 * code may differ. Set once, before the first key. */
void index_cache_key_set_builder(const unsigned char *id, unsigned length);
unsigned index_cache_key_builder_length(void);

/* The key's part: 0 no lines; else 1, plus 1 with the inlined calls,
 * plus 2 with the module's own line table only (LINE_FLAGS, module_data.h). */
int index_cache_line_mode(size_t line_budget, int line_flags);

/* MODULE's KEY for LINE_MODE (index_cache_line_mode) and DEMANGLE, with
 * ROOTS the debug roots (debug_roots.h). Returns 0, or -1 when MODULE
 * cannot be cached (no build-id, no regular file). Signal-safe (stat). */
int index_cache_key_of(const struct module_info *module, int line_mode, int demangle,
                       const char *roots, struct cache_key *key);

/* What a file for MODULE under KEY with LINE_BUDGET, INLINES and DEMANGLE
 * must have been made for. Pure. */
void index_cache_fit_of(const struct module_info *module, const struct cache_key *key,
                        size_t line_budget, int inlines, int demangle, struct cache_fit *out);

/* Whether KEY's file (STATUS, from fstatat) may be taken on its name's
 * facts alone, its check left to its first use (index_cache_deferred.c):
 * ours (EUID's alone), its mtime still the stamp its writer gave a file
 * whose lines are whole, and whole lines would fit FIT's budget. Pure. */
int index_cache_takes_unread(const struct stat *status, const struct cache_key *key,
                             const struct cache_fit *fit, unsigned euid);

#endif
