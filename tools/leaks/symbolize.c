/* symbolize.c: each module file named by a frame is indexed once, by
 * module_data_build (symbols, lines, debug file by build-id or
 * .gnu_debuglink), as a one-module snapshot at bias 0 that lookup_frame
 * searches with the module-relative offsets of the trace.
 * World: normal (libelf, libdw, malloc, files). */
#define _GNU_SOURCE
#include "symbolize.h"
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/array_grow.h"
#include "symbolize/debug_file.h"
#include "symbolize/index.h"
#include "symbolize/lookup.h"
#include "symbolize/module_data.h"

/* Source lines of a module may take this much (16 bytes a row). */
#define SYMBOLIZE_LINE_BUDGET ((size_t)1 << 30)

struct symbolizer_module {
    const char *path;                  /* the frame table's copy */
    struct index_snapshot *snapshot;   /* NULL: the file cannot be read */
};

int symbolizer_init(struct symbolizer *symbolizer, const struct frame_table *frames)
{
    size_t count = frames->count ? frames->count : 1;

    memset(symbolizer, 0, sizeof *symbolizer);
    elf_version(EV_CURRENT);
    symbolizer->frames = frames;
    symbolizer->descriptions = calloc(count, sizeof *symbolizer->descriptions);
    symbolizer->described = calloc(count, 1);
    if (symbolizer->descriptions == NULL || symbolizer->described == NULL ||
        id_index_init(&symbolizer->module_index) < 0) {
        symbolizer_free(symbolizer);
        return -ENOMEM;
    }
    return 0;
}

void symbolizer_free(struct symbolizer *symbolizer)
{
    for (size_t i = 0; i < symbolizer->module_count; i++) {
        struct index_snapshot *snapshot = symbolizer->modules[i].snapshot;
        if (snapshot != NULL)
            munmap((void *)snapshot->modules[0].data, snapshot->modules[0].data->mapped_bytes);
        free(snapshot);
    }
    free(symbolizer->modules);
    free(symbolizer->descriptions);
    free(symbolizer->described);
    id_index_free(&symbolizer->module_index);
    memset(symbolizer, 0, sizeof *symbolizer);
}

static unsigned file_build_id(const char *path, unsigned char id[MODULE_BUILD_ID_MAX])
{
    unsigned length = 0;
    int fd = elf_file_open(path);
    if (fd < 0)
        return 0;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF)
        length = elf_file_build_id(elf, id, MODULE_BUILD_ID_MAX);
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return length;
}

/* PATH as if it were loaded at address 0: offsets are then addresses. */
static struct index_snapshot *snapshot_of_file(const char *path)
{
    struct module_info module;
    size_t line_bytes;

    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = (char *)path;
    module.end = UINTPTR_MAX;
    errno = 0;
    module.build_id_length = file_build_id(path, module.build_id);
    if (module.build_id_length == 0 && errno == ENOMEM)
        return NULL;
    /* ENOMEM with data: some of it may be missing. Read once more (a
     * malloc that succeeds may leave ENOMEM too), then give up: a report
     * without names is worse than "out of memory". */
    const struct module_data *data = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (data != NULL)
            munmap((void *)data, data->mapped_bytes);
        data = module_data_build(&module, SYMBOLIZE_LINE_BUDGET, &line_bytes);
        if (errno != ENOMEM)
            break;
    }
    if (data != NULL && errno == ENOMEM) {
        munmap((void *)data, data->mapped_bytes);
        data = NULL;
        errno = ENOMEM;
    }
    if (data == NULL)
        return NULL; /* errno ENOMEM: out of memory, not an unreadable file */
    struct index_snapshot *snapshot = calloc(1, sizeof *snapshot + sizeof snapshot->modules[0]);
    if (snapshot == NULL) {
        munmap((void *)data, data->mapped_bytes);
        errno = ENOMEM;
        return NULL;
    }
    snapshot->count = 1;
    snapshot->modules[0] = (struct index_module){ .bias = 0, .start = 0, .end = UINTPTR_MAX,
                                                  .path = path, .data = data };
    return snapshot;
}

struct path_probe {
    const struct symbolizer *symbolizer;
    const char *path;
};

static int path_equal(const void *context, uint32_t id)
{
    const struct path_probe *probe = context;
    return strcmp(probe->symbolizer->modules[id].path, probe->path) == 0;
}

/* The snapshot of module PATH (NULL: unreadable), read on first use. */
static int module_snapshot(struct symbolizer *symbolizer, const char *path,
                           const struct index_snapshot **snapshot)
{
    struct path_probe probe = { symbolizer, path };
    uint64_t hash = hash_bytes(path, strlen(path));
    struct id_slot *slot = id_index_probe(&symbolizer->module_index, hash, path_equal, &probe);

    if (slot->id_plus_one != 0) {
        *snapshot = symbolizer->modules[slot->id_plus_one - 1].snapshot;
        return 0;
    }
    if (array_grow(&symbolizer->modules, &symbolizer->module_capacity, symbolizer->module_count,
                   sizeof *symbolizer->modules, 16) < 0)
        return -ENOMEM;
    struct symbolizer_module *module = &symbolizer->modules[symbolizer->module_count];
    module->path = path;
    errno = 0;
    module->snapshot = snapshot_of_file(path);
    if (module->snapshot == NULL && errno == ENOMEM)
        return -ENOMEM; /* not "unreadable": the report would lose its names */
    symbolizer->module_count++;
    *snapshot = module->snapshot;
    return id_index_fill(&symbolizer->module_index, slot, hash,
                         (uint32_t)(symbolizer->module_count - 1));
}

static void describe_at(const struct index_snapshot *snapshot, uint64_t address,
                        uint64_t call_address, struct frame_description *out)
{
    struct frame_location location;

    out->offset = call_address;
    if (snapshot == NULL)
        return;
    lookup_frame(snapshot, address, call_address, 1, &location);
    out->function = location.function_demangled;
    out->mangled = location.function;
    out->file = location.file;
    out->line = location.line;
}

/* The link-time address of the symbol named NAME in SNAPSHOT's module. */
static int symbol_address(const struct index_snapshot *snapshot, const char *name, uint64_t *address)
{
    const struct module_data *data = snapshot ? snapshot->modules[0].data : NULL;
    if (data == NULL)
        return -1;
    for (size_t i = 0; i < data->symbol_count; i++) {
        if (strcmp(data->strings + data->symbols[i].name, name) == 0) {
            *address = data->symbols[i].start;
            return 0;
        }
    }
    return -1;
}

static void describe_runtime(const struct frame *frame, struct frame_description *out)
{
    out->runtime = 1;
    out->offset = frame->address;
    out->function = out->mangled = frame->symbol;
    out->function_offset = frame->symbol_offset;
}

static int describe(struct symbolizer *symbolizer, const struct frame *frame,
                    struct frame_description *out)
{
    const struct index_snapshot *snapshot;
    uint64_t start;

    memset(out, 0, sizeof *out);
    out->module = frame->module;
    if (frame->module == NULL) {
        describe_runtime(frame, out);
        return 0;
    }
    if (module_snapshot(symbolizer, frame->module, &snapshot) < 0)
        return -ENOMEM;
    if (frame->kind == FRAME_MODULE_OFFSET) {
        describe_at(snapshot, frame->address, frame->address, out);
    } else if (symbol_address(snapshot, frame->symbol, &start) == 0) {
        /* glibc gives the return address: its call is one byte before. */
        uint64_t returned = start + (uint64_t)frame->symbol_offset;
        describe_at(snapshot, returned, returned ? returned - 1 : 0, out);
    } else {
        describe_runtime(frame, out);
    }
    return 0;
}

const struct frame_description *symbolizer_describe(struct symbolizer *symbolizer, uint32_t id)
{
    struct frame_description *description = &symbolizer->descriptions[id];

    if (!symbolizer->described[id]) {
        if (describe(symbolizer, &frame_table_get(symbolizer->frames, id)->frame, description) < 0)
            return NULL;
        symbolizer->described[id] = 1;
    }
    return description;
}
