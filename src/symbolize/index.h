/* index.h: the symbol index, as the signal-safe world reads it.
 *
 * Everything here lives in mmap'd memory, is immutable once published, and
 * is reached through one atomic pointer: readers take no lock. Addresses in
 * symbols and lines are link-time (add the module's bias). */
#ifndef EXECINFO_EX_INDEX_H
#define EXECINFO_EX_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "module_list.h"

struct index_cache_deferred;

struct index_symbol {
    uint64_t start;
    uint64_t size;      /* 0: matches its exact address only (glibc's rule) */
    uint32_t name;      /* offset in module_data.strings: the symbol's own name */
    uint32_t demangled; /* offset of its readable name: demangled (C++, Rust),
                           else the same as name */
};

struct index_line {
    uint64_t address;
    uint32_t file;      /* offset in module_data.strings */
    uint32_t line;      /* 0: past the end of a sequence */
};

/* One inlined call (a DW_TAG_inlined_subroutine with code). */
struct index_inline {
    uint32_t name;       /* offset in module_data.strings; INDEX_INLINE_NONE: unknown */
    uint32_t call_file;  /* where it was called: offset in strings, or INDEX_INLINE_NONE */
    uint32_t call_line;  /* 0: unknown */
    uint32_t parent;     /* the inlined call it sits in, always a lower index;
                            INDEX_INLINE_NONE: inlined into the real function */
};
#define INDEX_INLINE_NONE UINT32_MAX

/* From address FROM up to the next range, CALL is the innermost inlined
 * call (an index in module_data.inlines, or INDEX_INLINE_NONE: none). */
struct index_inline_range {
    uint64_t from;
    uint32_t call;
    uint32_t unused;
};

/* What one ELF file says, shared by every snapshot that holds the module. */
struct module_data {
    const struct index_symbol *symbols;
    size_t symbol_count;
    const struct index_line *lines;
    size_t line_count;
    const char *strings;
    size_t mapped_bytes;   /* size of the mapping this struct heads */
    int lines_truncated;   /* the line budget ran out inside this module */
    int names_demangled;   /* built with demangle=1 (symbols' demangled may differ from name) */
    /* The build's work on names, for the tests that hold it linear in the
     * file whatever the file holds (tests/unit/internal_elf.c): bytes of
     * names and file names stored, and bytes read to find where names end
     * and to store them. */
    size_t name_bytes;
    uint64_t name_bytes_read;
    /* Read from the index cache into a mapping shared with other modules'
     * data (src/symbolize/index_cache.c): never unmapped on its own. */
    int in_shared_mapping;
    /* Inlined calls (with inlines=1 and lines): ranges sorted by from,
     * strictly increasing. */
    const struct index_inline *inlines;
    size_t inline_count;
    const struct index_inline_range *inline_ranges;
    size_t inline_range_count;
    /* Non-NULL: a cache file checked at load by its header, mapped and
     * checked whole at its first use; the fields above are empty until
     * then: readers go through index_data_ready. */
    struct index_cache_deferred *deferred;
    /* A cache file mapped at its first use, whose contents were not
     * checked whole (index_cache_deferred.c): readers check each offset
     * they follow and each name they show (index_string). */
    int checked_at_use;
};

/* The string at OFFSET of DATA's strings, or NULL when OFFSET is past
 * their end or, in data checked at use, the string holds a byte that
 * module_data.c never stores (a control character). Signal-safe
 * (lookup.c). */
const char *index_string(const struct module_data *data, uint32_t offset);

/* DATA as readers may use it: a deferred cache file mapped and checked at
 * this first use (NULL if it changed since the load), else DATA itself.
 * Signal-safe (src/symbolize/index_cache_deferred.c). */
const struct module_data *index_data_ready(const struct module_data *data);

struct index_module {
    uintptr_t bias, start, end;
    const char *path;                /* display path, in the snapshot */
    const struct module_data *data;  /* NULL: not readable, path(+off) only */
    unsigned char build_id[MODULE_BUILD_ID_MAX];
    unsigned build_id_length;
    int is_main;                     /* the program (its file is /proc/PID/exe) */
};

struct index_snapshot {
    size_t count;
    size_t mapped_bytes;
    struct index_module modules[];   /* sorted by start */
};

/* Reader side (signal-safe): acquire returns the published snapshot or
 * NULL, and must be paired with release. */
const struct index_snapshot *index_acquire(void);
void index_release(void);

/* Publish SNAPSHOT and return the one it replaces. Signal-safe. */
struct index_snapshot *index_publish(struct index_snapshot *snapshot);
/* The load's word that the first reader builds the snapshot
 * (index_at_crash.h): SETUP is kept, not copied. Signal-safe. */
struct index_at_crash_setup;
void index_leave_to_reader(const struct index_at_crash_setup *setup);
const struct index_at_crash_setup *index_left_to_reader(void);
/* The published snapshot, for a reader already counted in (acquire). */
const struct index_snapshot *index_published(void);
/* Publish SNAPSHOT unless one is published: returns the one that is.
 * Signal-safe. A snapshot whose mapped_bytes is 0 is static, never
 * unmapped (index_at_crash.c). */
const struct index_snapshot *index_publish_first(struct index_snapshot *snapshot);
/* Whether a reader may still be inside an older snapshot. Signal-safe. */
int index_readers_active(void);

/* Builder side (normal world). */
int index_refresh(int force);
/* A refresh that reads no ELF file (at load: the constructor, the
 * install): modules without a warm cache file are published without data,
 * and the next index_refresh builds them. */
int index_refresh_light(void);
int index_build_now(void);
/* index_refresh(0) after dlopen or dlclose returned (load_watch.c): does
 * nothing inside this thread's own build or before the library's
 * constructor has built the first index. */
int index_refresh_after_load(void);

/* What the loaded index holds, for docs and benchmarks. */
struct index_statistics {
    size_t modules, symbols, lines, mapped_bytes;
};
void index_statistics(struct index_statistics *out);

#endif
