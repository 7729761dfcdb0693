/* profile_facts.h: a heap profile as plain tables, gathered once from the
 * stack counts and the symbolizer, then rendered by profile_pprof.c
 * (pprof's profile.proto) and profile_folded.c (folded stacks): the same
 * facts in each format. Shaped as profile.proto is (samples of locations,
 * locations of lines, lines of functions, locations in mappings), since
 * that is the richer of the two. */
#ifndef EXECINFO_EX_PROFILE_FACTS_H
#define EXECINFO_EX_PROFILE_FACTS_H

#include <stddef.h>
#include <stdint.h>

/* A sample's values, in profile.proto's order: the sample types. */
enum profile_value {
    PROFILE_ALLOC_OBJECTS,
    PROFILE_ALLOC_SPACE,
    PROFILE_INUSE_OBJECTS,
    PROFILE_INUSE_SPACE,
    PROFILE_PEAK_OBJECTS,   /* in use when the live bytes peaked */
    PROFILE_PEAK_SPACE,
    PROFILE_VALUES
};

/* "alloc_objects"...; and whether a value is a count or bytes
 * (profile_values.c, shared with execinfo_ex_leaks). */
extern const char *const profile_value_names[PROFILE_VALUES];
int profile_value_is_bytes(enum profile_value value);
/* The value NAME names ("inuse_space"...), or -1. */
int profile_value_by_name(const char *name);

struct profile_function {
    const char *name;            /* demangled; module+0xoffset when unknown */
    const char *file;            /* "" when unknown */
};

/* One function of a location: the innermost inlined one first, the
 * location's own (physical) function last. */
struct profile_line {
    size_t function;             /* index into functions */
    unsigned line;               /* 0 when unknown */
    unsigned column;
};

struct profile_mapping {
    uint64_t start, limit;       /* an executable segment, in memory */
    uint64_t file_offset;
    const char *path;
    char build_id[41];           /* hex, "" when the module has none */
};

struct profile_location {
    uint64_t address;            /* of the call (return address - 1) */
    size_t mapping;              /* index into mappings + 1; 0: in none */
    size_t first_line, line_count;
};

struct profile_sample {
    size_t first_location, depth;  /* into sample_locations, innermost first */
    int64_t values[PROFILE_VALUES];
};

struct heap_profile {
    struct profile_sample *samples;
    size_t sample_count;
    size_t *sample_locations;      /* location indices */
    struct profile_location *locations;
    size_t location_count;
    struct profile_line *lines;
    size_t line_count;
    struct profile_function *functions;
    size_t function_count;
    struct profile_mapping *mappings;
    size_t mapping_count;
    int64_t totals[PROFILE_VALUES];
    int64_t time_nanos;            /* when it was gathered (CLOCK_REALTIME) */
    int pid;
    /* What the strings point into, freed with the profile. */
    void *resolved;
    char **owned;
    size_t owned_count, owned_capacity;
};

/* Gather the profile of every counted stack now: frames merged across
 * threads, named by backtrace_resolve from the symbol index alone. Returns
 * 0 or a negative errno (-ENOMEM); PROFILE is then empty and may be
 * freed. World: normal (malloc); called with the hook layer busy (heap_busy), so that
 * its own allocations are not counted. */
int profile_facts_gather(struct heap_profile *profile);
void profile_facts_free(struct heap_profile *profile);

#endif
