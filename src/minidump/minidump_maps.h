/* minidump_maps.h: the process's mappings, read once from /proc/self/maps
 * into a table the writer searches (a thread's stack, the pc's mapping, a
 * module's file).
 * World: signal-safe. */
#ifndef EXECINFO_EX_MINIDUMP_MAPS_H
#define EXECINFO_EX_MINIDUMP_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct minidump_mapping {
    uintptr_t start, end, offset;
    uint32_t path;          /* offset in minidump_maps.paths; 0: anonymous */
    unsigned char readable, writable, executable, shared;
};

struct minidump_maps {
    struct minidump_mapping *mappings; /* in address order */
    size_t count, capacity;
    char *paths;            /* NUL-terminated paths; paths[0] is "" */
    size_t paths_used, paths_capacity;
};

/* Read /proc/self/maps into MAPS (its arrays are the caller's). Returns 0
 * or -errno; what did not fit is left out. */
int minidump_maps_read(struct minidump_maps *maps);

/* The mapping holding ADDRESS, or NULL. */
const struct minidump_mapping *minidump_maps_find(const struct minidump_maps *maps,
                                                  uintptr_t address);

static inline const char *minidump_mapping_path(const struct minidump_maps *maps,
                                                const struct minidump_mapping *mapping)
{
    return maps->paths + mapping->path;
}

#endif
