/* index_cache.h: module index data kept on disk between processes.
 *
 * One file per module, named by its build-id and a hash of what shaped the
 * data (this library's own build-id, the module file's identity, whether
 * lines and inlined calls were read, whether names were demangled). A
 * later process reads the file into private memory and checks all of it
 * (a checksum, the bounds of every offset, both names of each symbol's
 * included, sorted arrays, printable names, the debug files the data came
 * from still as they were) before the index may show it: the signal-safe
 * readers trust the data. */
#ifndef EXECINFO_EX_INDEX_CACHE_H
#define EXECINFO_EX_INDEX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "module_list.h"
#include "../base/options.h"

struct file_probes;

/* At the start of each rebuild, under the build lock: the first call finds
 * the directory (OPTIONS' index_cache) and this library's build-id in LIST.
 * Normal world, as is everything here. */
/* Whether OPTIONS let this process use the cache (not index_cache=0,
 * not a set-user-ID program or the like). Normal world. */
int index_cache_allowed(const struct options *options);

void index_cache_prepare(const struct options *options, const struct module_list *list);

/* Before index_cache_prepare: the build-id of the library whose files
 * these are, instead of this code's own (the second stage stores for the
 * crashed process's library, tools/symbolize/). */
void index_cache_set_builder(const unsigned char *id, unsigned length);

/* MODULE's data from the cache, built with LINE_BUDGET (0: no lines) and
 * LINE_FLAGS (module_data.h: the inlined calls, the module's own line
 * table only) and DEMANGLE (the
 * demangle= option), or NULL (no usable file: build it). Sets *LINE_BYTES. */
const struct module_data *index_cache_load(const struct module_info *module, size_t line_budget,
                                           int line_flags, int demangle, size_t *line_bytes);

/* Keep DATA, just built for MODULE with LINE_BUDGET and LINE_FLAGS (and
 * demangled names if DATA says so) from the debug files in PROBES, for
 * later processes. Errors (a full disk, a read-only
 * directory) are counted, and stop further stores in this process. */
void index_cache_store(const struct module_info *module, size_t line_budget, int line_flags,
                       const struct module_data *data, size_t line_bytes,
                       const struct file_probes *probes);

/* After each rebuild, before its snapshot is published: the data read are
 * made read-only; if files were stored, the directory is kept under its
 * cap. */
void index_cache_finish(void);

struct index_cache_statistics {
    int enabled;                 /* a directory is in use */
    unsigned long long loaded;   /* modules read from the cache */
    unsigned long long missed;   /* modules looked up and not found */
    unsigned long long refused;  /* files found and not used (damaged, stale, not ours) */
    unsigned long long stored;   /* files written */
    unsigned long long store_failed;
};
void index_cache_statistics(struct index_cache_statistics *out);

/* Whether IMAGE (SIZE bytes, a whole cache file) is well formed: its
 * checksum, sizes, offsets, order and strings. Pure; for the loader, the
 * tests and the fuzzer. */
int index_cache_image_valid(const unsigned char *image, size_t size);
/* Where the arrays of a well-formed IMAGE are (index_cache_image_valid
 * said so): for the validator itself, the tests and the fuzzer. */
struct index_cache_arrays {
    const struct index_symbol *symbols;
    size_t symbol_count;
    const struct index_line *lines;
    size_t line_count;
    const struct index_inline *inlines;
    size_t inline_count;
    const struct index_inline_range *inline_ranges;
    size_t inline_range_count;
    const char *strings;
    size_t strings_bytes;
};
void index_cache_image_arrays(const unsigned char *image, struct index_cache_arrays *out);
/* The checksum an image must carry (tests write damaged files with it). */
uint64_t index_cache_image_checksum(const unsigned char *image, size_t size);
/* Where the checksum sits in an image, and the first payload byte. */
#define INDEX_CACHE_CHECKSUM_AT 16
size_t index_cache_header_bytes(void);

/* The largest cache directory kept, in bytes. */
#define INDEX_CACHE_BYTES_MAX ((uint64_t)64 << 20)

#endif
