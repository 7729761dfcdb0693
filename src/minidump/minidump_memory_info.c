/* minidump_memory_info.c: the memory info list: every mapping of
 * /proc/self/maps with its protection, as Crashpad writes it on Linux
 * (Breakpad's Linux writer has none; its processor and minidump_dump
 * read it, and so do rust-minidump and Sentry to tell code from data).
 * World: signal-safe (the table minidump_maps_read filled). */
#include "minidump_streams.h"

#include <string.h>

static uint32_t protection_of(const struct minidump_mapping *mapping)
{
    if (mapping->executable)
        return mapping->writable ? MD_MEMORY_PROTECT_EXECUTE_READWRITE
             : mapping->readable ? MD_MEMORY_PROTECT_EXECUTE_READ
                                 : MD_MEMORY_PROTECT_EXECUTE;
    return mapping->writable ? MD_MEMORY_PROTECT_READWRITE
         : mapping->readable ? MD_MEMORY_PROTECT_READONLY
                             : MD_MEMORY_PROTECT_NOACCESS;
}

int minidump_memory_info_list(struct minidump_state *state, struct md_raw_directory *entry)
{
    const struct minidump_maps *maps = &state->maps;
    struct md_raw_memory_info_list header = {
        sizeof header, sizeof(struct md_raw_memory_info), maps->count,
    };
    uint32_t rva, size = (uint32_t)(sizeof header + maps->count * sizeof(struct md_raw_memory_info));
    if (maps->count == 0)
        return -1; /* /proc/self/maps could not be read */
    int result = minidump_file_take(&state->file, size, &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &header, sizeof header);
    for (size_t i = 0; result == 0 && i < maps->count; i++) {
        const struct minidump_mapping *mapping = &maps->mappings[i];
        struct md_raw_memory_info info;
        memset(&info, 0, sizeof info);
        info.base_address = info.allocation_base = mapping->start;
        info.allocation_protection = info.protection = protection_of(mapping);
        info.region_size = mapping->end - mapping->start;
        info.state = MD_MEMORY_STATE_COMMIT;
        info.type = mapping->path != 0 ? MD_MEMORY_TYPE_MAPPED : MD_MEMORY_TYPE_PRIVATE;
        result = minidump_file_write(&state->file,
                                     rva + (uint32_t)(sizeof header + i * sizeof info), &info,
                                     sizeof info);
    }
    if (result < 0)
        return result;
    entry->stream_type = MD_MEMORY_INFO_LIST_STREAM;
    entry->location = (struct md_location){ size, rva };
    return 0;
}
