/* demangled_names.c: demangle every name of a symbol vector once, into one
 * growing buffer, so that the packing can size and copy them.
 * The names of inlined calls are demangled in place, in the line table.
 * World: normal (malloc, libiberty through demangle.c). */
#include "demangled_names.h"
#include "demangle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct demangled_names *out, size_t bytes)
{
    if (out->capacity - out->used >= bytes)
        return 0;
    size_t grown = out->capacity ? out->capacity : 64 << 10;
    while (grown - out->used < bytes)
        grown *= 2;
    char *text = realloc(out->text, grown);
    if (text == NULL)
        return -ENOMEM;
    out->text = text;
    out->capacity = grown;
    return 0;
}

/* Demangle NAME straight into the buffer; the offset or DEMANGLED_NONE. */
static int add_one(struct demangled_names *out, const char *name, uint32_t *offset)
{
    *offset = DEMANGLED_NONE;
    if (name == NULL || reserve(out, DEMANGLE_OUTPUT_MAX + 1) < 0)
        return name == NULL ? 0 : -ENOMEM;
    size_t length = demangle_name(name, out->text + out->used);
    /* Not mangled, or no different: the symbol's own name serves. */
    if (length == 0 || strcmp(out->text + out->used, name) == 0)
        return 0;
    *offset = (uint32_t)out->used;
    out->used += length + 1;
    return 0;
}

int demangled_names_gather(const struct symbol_vector *symbols, size_t budget,
                           struct demangled_names *out)
{
    memset(out, 0, sizeof *out);
    if (symbols->count == 0)
        return 0;
    /* Offsets are 32 bits; the packing budget is far below. */
    if (budget > UINT32_MAX - DEMANGLE_OUTPUT_MAX - 1)
        budget = UINT32_MAX - DEMANGLE_OUTPUT_MAX - 1;
    out->offsets = malloc(symbols->count * sizeof *out->offsets);
    if (out->offsets == NULL)
        return -ENOMEM;
    out->count = symbols->count;
    for (size_t i = 0; i < symbols->count; i++) {
        out->offsets[i] = DEMANGLED_NONE;
        if (out->used < budget && add_one(out, symbols->entries[i].name, &out->offsets[i]) < 0) {
            demangled_names_free(out);
            return -ENOMEM;
        }
    }
    return 0;
}

void demangled_names_free(struct demangled_names *names)
{
    free(names->text);
    free(names->offsets);
    memset(names, 0, sizeof *names);
}

/* The name at FILES[INDEX] demangled in place, if that keeps *SIZE within
 * BUDGET. */
static int demangle_in_place(char **files, uint32_t index, char *buffer, size_t *size,
                             size_t budget)
{
    size_t length = demangle_name(files[index], buffer);
    size_t old = strlen(files[index]);
    if (length == 0 || strcmp(buffer, files[index]) == 0 ||
        (length > old && *size + (length - old) > budget))
        return 0;
    char *copy = strdup(buffer);
    if (copy == NULL)
        return -ENOMEM;
    free(files[index]);
    files[index] = copy;
    *size = *size + length - old;
    return 0;
}

int demangled_inline_names(struct line_vector *lines, size_t budget)
{
    const struct inline_vector *inlines = &lines->inlines;
    if (inlines->call_count == 0)
        return 0;
    unsigned char *done = calloc(lines->file_count, 1);
    char *buffer = malloc(DEMANGLE_OUTPUT_MAX + 1);
    int result = done == NULL || buffer == NULL ? -ENOMEM : 0;
    size_t size = line_table_packed_size(lines);
    for (size_t i = 0; i < inlines->call_count && result == 0; i++) {
        uint32_t name = inlines->calls[i].name;
        if (name == INLINE_NONE || name >= lines->file_count || done[name])
            continue;
        done[name] = 1;
        result = demangle_in_place(lines->files, name, buffer, &size, budget);
    }
    free(buffer);
    free(done);
    return result;
}
