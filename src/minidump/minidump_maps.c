/* minidump_maps.c: /proc/self/maps as a sorted table, read with
 * maps_reader (open, read, close into stack buffers).
 * World: signal-safe. */
#include "minidump_maps.h"
#include "../base/maps_reader.h"

#include <errno.h>
#include <string.h>

static uint32_t keep_path(struct minidump_maps *maps, const char *path)
{
    size_t length = strlen(path);
    if (length == 0 || maps->paths_used + length + 1 > maps->paths_capacity)
        return 0;
    /* Consecutive mappings of one file share its path. */
    size_t count = maps->count;
    if (count > 0 && maps->mappings[count - 1].path != 0 &&
        strcmp(maps->paths + maps->mappings[count - 1].path, path) == 0)
        return maps->mappings[count - 1].path;
    uint32_t offset = (uint32_t)maps->paths_used;
    memcpy(maps->paths + offset, path, length + 1);
    maps->paths_used += length + 1;
    return offset;
}

static int add_mapping(const struct maps_entry *entry, void *context)
{
    struct minidump_maps *maps = context;
    if (maps->count == maps->capacity)
        return 1;
    struct minidump_mapping *mapping = &maps->mappings[maps->count];
    mapping->start = entry->start;
    mapping->end = entry->end;
    mapping->offset = entry->offset;
    mapping->readable = (unsigned char)entry->readable;
    mapping->writable = (unsigned char)entry->writable;
    mapping->executable = (unsigned char)entry->executable;
    mapping->shared = (unsigned char)entry->shared;
    mapping->path = keep_path(maps, entry->path);
    maps->count++;
    return 0;
}

int minidump_maps_read(struct minidump_maps *maps)
{
    maps->count = 0;
    maps->paths_used = 0;
    if (maps->paths_capacity > 0) {
        maps->paths[0] = '\0';
        maps->paths_used = 1;
    }
    int result = maps_for_each(add_mapping, maps);
    return result < 0 ? result : 0;
}

const struct minidump_mapping *minidump_maps_find(const struct minidump_maps *maps,
                                                  uintptr_t address)
{
    size_t low = 0, high = maps->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const struct minidump_mapping *mapping = &maps->mappings[middle];
        if (address < mapping->start)
            high = middle;
        else if (address >= mapping->end)
            low = middle + 1;
        else
            return mapping;
    }
    return NULL;
}
