/* inline_table.c: read the inlined calls of a module's DWARF with libdw
 * and flatten their address ranges into segments that a signal-safe
 * binary search can read (src/symbolize/inline_lookup.c).
 * World: normal (libdw, malloc).
 *
 * Each DW_TAG_inlined_subroutine with code is one call: the function's
 * name (its abstract origin's DW_AT_linkage_name, else DW_AT_name, as
 * backtrace_resolve names it) and where it was called (DW_AT_call_file,
 * DW_AT_call_line), with the inlined call it sits in as its parent: the
 * DIE tree, as addr2line -i and dwarf_getscopes read it. */
#include "inline_table.h"
#include "../base/array_grow.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What one call and one segment take in the index (struct index_inline,
 * struct index_inline_range). */
#define CALL_PACKED_BYTES 16
#define SEGMENT_PACKED_BYTES 16
/* Hostile DWARF can nest without end: deeper DIEs are not looked at, and
 * chains are never longer than this. */
#define DIE_NESTING_MAX 128
#define INLINE_DEPTH_MAX 64

struct unit_reader {
    Dwarf_Die *unit;
    struct inline_vector *out;
    inline_intern_fn intern;
    void *context;
};

static const char *inlined_name(Dwarf_Die *die)
{
    Dwarf_Attribute attribute;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute) != NULL)
        name = dwarf_formstring(&attribute);
    if (name == NULL && dwarf_attr_integrate(die, DW_AT_name, &attribute) != NULL)
        name = dwarf_formstring(&attribute);
    return name;
}

static uint32_t intern_or_none(struct unit_reader *reader, const char *text, int *error)
{
    if (text == NULL)
        return INLINE_NONE;
    long index = reader->intern(reader->context, text);
    if (index < 0) {
        *error = (int)index;
        return INLINE_NONE;
    }
    return (uint32_t)index;
}

/* The call of DIE (its name, where it was called), appended. */
static int push_call(struct unit_reader *reader, Dwarf_Die *die, uint32_t parent)
{
    struct inline_vector *out = reader->out;
    Dwarf_Attribute attribute;
    Dwarf_Word value;
    Dwarf_Files *files;
    size_t file_count;
    const char *file = NULL;
    int error = 0;
    struct inline_call call = { INLINE_NONE, INLINE_NONE, 0, parent };

    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attribute), &value) == 0 &&
        dwarf_getsrcfiles(reader->unit, &files, &file_count) == 0 && value < file_count)
        file = dwarf_filesrc(files, value, NULL, NULL);
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attribute), &value) == 0)
        call.call_line = value <= UINT32_MAX ? (uint32_t)value : 0;
    call.name = intern_or_none(reader, inlined_name(die), &error);
    call.call_file = intern_or_none(reader, file, &error);
    if (error < 0)
        return error;
    if (array_grow(&out->calls, &out->call_capacity, out->call_count, sizeof *out->calls, 256) < 0)
        return -ENOMEM;
    out->calls[out->call_count++] = call;
    return 0;
}

static int push_range(struct inline_vector *out, struct inline_range range)
{
    if (array_grow(&out->ranges, &out->range_capacity, out->range_count, sizeof *out->ranges,
                   256) < 0)
        return -ENOMEM;
    out->ranges[out->range_count++] = range;
    return 0;
}

/* The inlined call DIE: its ranges, then the calls inside it. An empty
 * one (all its code folded into its caller's) is no call. */
static int read_inlined(struct unit_reader *reader, Dwarf_Die *die, uint32_t parent,
                        uint32_t depth, int nesting);

/* Whether DIE has addresses of its own. */
static int has_code(Dwarf_Die *die)
{
    return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

static int read_children(struct unit_reader *reader, Dwarf_Die *die, uint32_t parent,
                         uint32_t depth, int nesting)
{
    Dwarf_Die child;
    int result = 0;

    if (nesting >= DIE_NESTING_MAX || dwarf_child(die, &child) != 0)
        return 0;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_inlined_subroutine:
            if (depth < INLINE_DEPTH_MAX)
                result = read_inlined(reader, &child, parent, depth + 1, nesting + 1);
            break;
        case DW_TAG_subprogram:
            /* A function of its own (a nested one too): no caller inlined.
             * Without code (a declaration in a class, an abstract
             * instance) it holds no call: its parameters are not read. */
            if (has_code(&child))
                result = read_children(reader, &child, INLINE_NONE, 0, nesting + 1);
            break;
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
            result = read_children(reader, &child, parent, depth, nesting + 1);
            break;
        default: /* types, variables, parameters: no code */
            break;
        }
    } while (result == 0 && dwarf_siblingof(&child, &child) == 0);
    return result;
}

static int read_inlined(struct unit_reader *reader, Dwarf_Die *die, uint32_t parent,
                        uint32_t depth, int nesting)
{
    struct inline_vector *out = reader->out;
    size_t first_range = out->range_count;
    uint32_t call = (uint32_t)out->call_count;
    Dwarf_Addr base, low, high;
    ptrdiff_t offset = 0;

    if (out->call_count >= INLINE_NONE - 1)
        return 0;
    while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) {
        if (low >= high)
            continue;
        struct inline_range range = { low, high, call, depth };
        if (push_range(out, range) < 0)
            return -ENOMEM;
    }
    if (out->range_count == first_range)
        return 0;
    int result = push_call(reader, die, parent);
    if (result < 0)
        return result;
    return read_children(reader, die, call, depth, nesting);
}

int inline_table_read_unit(Dwarf_Die *unit, struct inline_vector *out, inline_intern_fn intern,
                           void *context)
{
    struct unit_reader reader = { unit, out, intern, context };
    return read_children(&reader, unit, INLINE_NONE, 0, 0);
}

void inline_table_cut(struct inline_vector *inlines, size_t calls, size_t ranges)
{
    if (calls < inlines->call_count)
        inlines->call_count = calls;
    if (ranges < inlines->range_count)
        inlines->range_count = ranges;
}

size_t inline_table_budget_bytes(const struct inline_vector *inlines)
{
    return inlines->call_count * CALL_PACKED_BYTES +
           inlines->range_count * 2 * SEGMENT_PACKED_BYTES;
}

/* ---- flattening ---- */

/* Outer before inner where two start at one address, then the longer. */
static int by_start(const void *a, const void *b)
{
    const struct inline_range *left = a, *right = b;
    if (left->low != right->low)
        return left->low < right->low ? -1 : 1;
    if (left->depth != right->depth)
        return left->depth < right->depth ? -1 : 1;
    if (left->high != right->high)
        return left->high > right->high ? -1 : 1;
    return left->call < right->call ? -1 : left->call > right->call;
}

/* From FROM on, CALL: a segment at the same address is replaced, one
 * that says what the last says is not added. Room is made in advance. */
static void emit(struct inline_vector *inlines, uint64_t from, uint32_t call)
{
    struct inline_segment *segments = inlines->segments;
    size_t count = inlines->segment_count;
    if (count > 0 && segments[count - 1].from == from) {
        count--;
        inlines->segment_count = count;
    }
    if (count > 0 && segments[count - 1].call == call)
        return;
    if (count == 0 && call == INLINE_NONE)
        return;
    segments[count].from = from;
    segments[count].call = call;
    inlines->segment_count = count + 1;
}

/* Close the innermost open range: from its end, the one around it. */
static void close_top(struct inline_vector *inlines, struct inline_range *stack, size_t *depth)
{
    uint64_t end = stack[*depth - 1].high;
    (*depth)--;
    emit(inlines, end, *depth > 0 ? stack[*depth - 1].call : INLINE_NONE);
}

/* Ranges nest as the DIEs do: a sweep with a stack of the open ones. A
 * range that reaches past the one it starts in (damaged DWARF) is cut at
 * its end, so that segments stay sorted. */
int inline_table_finish(struct inline_vector *inlines)
{
    size_t count = inlines->range_count, depth = 0;
    struct inline_range *ranges = inlines->ranges;
    struct inline_range *stack = count ? malloc(count * sizeof *stack) : NULL;

    inlines->segments = count ? malloc(count * 2 * sizeof *inlines->segments) : NULL;
    inlines->segment_count = 0;
    if (count > 0 && (stack == NULL || inlines->segments == NULL)) {
        free(stack);
        inline_vector_free(inlines);
        return -ENOMEM;
    }
    if (count > 1)
        qsort(ranges, count, sizeof *ranges, by_start);
    for (size_t i = 0; i < count; i++) {
        struct inline_range range = ranges[i];
        while (depth > 0 && stack[depth - 1].high <= range.low)
            close_top(inlines, stack, &depth);
        if (depth > 0 && range.high > stack[depth - 1].high)
            range.high = stack[depth - 1].high;
        stack[depth++] = range;
        emit(inlines, range.low, range.call);
    }
    while (depth > 0)
        close_top(inlines, stack, &depth);
    free(stack);
    free(inlines->ranges);
    inlines->ranges = NULL;
    inlines->range_count = inlines->range_capacity = 0;
    return 0;
}

size_t inline_table_packed_size(const struct inline_vector *inlines)
{
    return inlines->call_count * CALL_PACKED_BYTES +
           inlines->segment_count * SEGMENT_PACKED_BYTES;
}

void inline_vector_free(struct inline_vector *inlines)
{
    free(inlines->calls);
    free(inlines->ranges);
    free(inlines->segments);
    memset(inlines, 0, sizeof *inlines);
}
