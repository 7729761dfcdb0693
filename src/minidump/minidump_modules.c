/* minidump_modules.c: the module list: every module of the index
 * snapshot, its path as its name and its build-id as a CodeView record
 * ("BpEL", Breakpad's ELF signature) that symbol servers look it up by;
 * a module without a build-id gets Breakpad's fallback identifier.
 * World: signal-safe. */
#include "minidump_streams.h"
#include "minidump_file_id.h"

#include <string.h>

/* The path /proc/self/maps gives the module's first mapping, absolute
 * (the index names the program by its argv[0]); else the index's. */
static const char *module_path(const struct minidump_state *state,
                               const struct index_module *module)
{
    const struct minidump_mapping *mapping = minidump_maps_find(&state->maps, module->start);
    const char *path = mapping != NULL ? minidump_mapping_path(&state->maps, mapping) : "";
    return path[0] == '/' ? path : module->path != NULL ? module->path : "";
}

static int write_codeview(struct minidump_state *state, const struct index_module *module,
                          const char *path, struct md_location *where)
{
    uint8_t record[4 + MODULE_BUILD_ID_MAX];
    uint32_t signature = MD_CVINFOELF_SIGNATURE;
    size_t length = module->build_id_length;
    memcpy(record, &signature, 4);
    if (length > 0 && length <= MODULE_BUILD_ID_MAX) {
        memcpy(record + 4, module->build_id, length);
    } else {
        if (minidump_file_id_from_text(path, record + 4, (uint8_t *)state->file.scratch) < 0)
            return -1; /* no identifier: no CodeView record, as Breakpad */
        length = MD_GUID_SIZE;
    }
    return minidump_file_append(&state->file, record, 4 + length, where);
}

static int write_module(struct minidump_state *state, const struct index_module *module,
                        uint32_t record_rva)
{
    struct md_raw_module raw;
    memset(&raw, 0, sizeof raw);
    const char *path = module_path(state, module);
    raw.base_of_image = module->start;
    raw.size_of_image = (uint32_t)(module->end - module->start);
    struct md_location codeview = { 0, 0 }, name;
    write_codeview(state, module, path, &codeview);
    raw.cv_record = codeview;
    int result = minidump_file_append_string(&state->file, path, strlen(path), &name);
    if (result < 0)
        return result;
    raw.module_name_rva = name.rva;
    return minidump_file_write(&state->file, record_rva, &raw, sizeof raw);
}

int minidump_module_list(struct minidump_state *state, struct md_raw_directory *entry)
{
    const struct index_snapshot *snapshot = state->input->snapshot;
    uint32_t count = snapshot != NULL ? (uint32_t)snapshot->count : 0, rva;
    uint32_t size = 4 + count * (uint32_t)sizeof(struct md_raw_module);
    int result = minidump_file_take(&state->file, size, &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &count, 4);
    for (uint32_t i = 0; result == 0 && i < count; i++)
        result = write_module(state, &snapshot->modules[i],
                              rva + 4 + i * (uint32_t)sizeof(struct md_raw_module));
    if (result < 0)
        return result;
    entry->stream_type = MD_MODULE_LIST_STREAM;
    entry->location = (struct md_location){ size, rva };
    return 0;
}
