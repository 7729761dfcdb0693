/* lookup.c: binary searches over the published index.
 * World: signal-safe (reads immutable mmap'd arrays; the fallback reads
 * /proc/self/maps with raw syscalls). */
#include "lookup.h"
#include "maps_fallback.h"

#include <string.h>

const struct index_module *lookup_module(const struct index_snapshot *snapshot,
                                         uintptr_t address)
{
    size_t low = 0, high = snapshot ? snapshot->count : 0;

    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (snapshot->modules[middle].start <= address)
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0)
        return NULL;
    const struct index_module *module = &snapshot->modules[low - 1];
    return address < module->end ? module : NULL;
}

int lookup_module_unread(const struct index_module *module)
{
    return module->data == NULL || index_data_ready(module->data) == NULL;
}

const char *index_string(const struct module_data *data, uint32_t offset)
{
    if (offset >= data->name_bytes)
        return NULL;
    const char *string = data->strings + offset;
    /* The strings end with a NUL (checked at the first use), so this
     * scan ends inside them. */
    for (const char *at = string; data->checked_at_use && *at != '\0'; at++)
        if ((unsigned char)*at < 0x20 || *at == 0x7f)
            return NULL;
    return string;
}

static int contains(const struct index_symbol *symbol, uint64_t address)
{
    if (symbol->size == 0)
        return address == symbol->start;
    return address - symbol->start < symbol->size;
}

static const struct index_symbol *find_symbol(const struct module_data *data, uint64_t address)
{
    size_t low = 0, high = data->symbol_count;

    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (data->symbols[middle].start <= address)
            low = middle + 1;
        else
            high = middle;
    }
    for (size_t back = 0; back < LOOKUP_ENCLOSING_LIMIT && low > back; back++) {
        const struct index_symbol *symbol = &data->symbols[low - 1 - back];
        if (contains(symbol, address))
            return symbol;
    }
    return NULL;
}

static const struct index_line *find_line(const struct module_data *data, uint64_t address)
{
    size_t low = 0, high = data->line_count;

    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (data->lines[middle].address <= address)
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0 || data->lines[low - 1].line == 0)
        return NULL;
    return &data->lines[low - 1];
}

static void describe_in_module(const struct index_module *module, uintptr_t address,
                               uintptr_t call_address, int lines, struct frame_location *out)
{
    const struct module_data *data = index_data_ready(module->data);

    out->module_path = module->path;
    out->module_bias = module->bias;
    if (data == NULL)
        return;
    int call_inside = call_address >= module->start && call_address < module->end;
    /* A return address names the function of its call: the next function
     * may begin right at it (after a noreturn call, a packed .cold part). */
    const struct index_symbol *symbol = NULL;
    if (call_address != address && call_inside)
        symbol = find_symbol(data, call_address - module->bias);
    if (symbol == NULL)
        symbol = find_symbol(data, address - module->bias);
    const char *name = symbol != NULL ? index_string(data, symbol->name) : NULL;
    const char *demangled = symbol != NULL ? index_string(data, symbol->demangled) : NULL;
    if (name != NULL && demangled != NULL) {
        out->function = name;
        out->function_demangled = demangled;
        out->function_address = module->bias + symbol->start;
    }
    if (lines && call_inside) {
        const struct index_line *line = find_line(data, call_address - module->bias);
        const char *file = line != NULL ? index_string(data, line->file) : NULL;
        if (file != NULL) {
            out->file = file;
            out->line = line->line;
        }
        lookup_inline_chain(data, call_address - module->bias, out);
    }
}

void lookup_frame(const struct index_snapshot *snapshot, uintptr_t address,
                  uintptr_t call_address, int lines, struct frame_location *out)
{
    out->module_path = NULL;
    out->module_bias = 0;
    out->function = NULL;
    out->function_demangled = NULL;
    out->function_address = 0;
    out->file = NULL;
    out->line = 0;
    out->inline_data = NULL;
    out->inline_call = INDEX_INLINE_NONE;
    out->inner_file = NULL;
    out->inner_line = 0;
    out->resolved_inlined = NULL;
    out->resolved_inlined_count = 0;
    out->fallback_path[0] = '\0';

    const struct index_module *module = lookup_module(snapshot, address);
    if (module != NULL) {
        describe_in_module(module, address, call_address, lines, out);
        return;
    }
    if (address == 0)
        return;
    uintptr_t bias;
    if (maps_fallback_find(address, out->fallback_path, sizeof out->fallback_path, &bias) == 0) {
        out->module_path = out->fallback_path;
        out->module_bias = bias;
    }
}
