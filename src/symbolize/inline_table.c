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
#include "../base/run_sort.h"

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

/* The names already interned, by their abstract origin's DIE offset:
 * template code inlines one function at hundreds of places, and its
 * name (a long linkage name, found through the origin) costs an
 * attribute walk and a hash of the string at each. Open addressing, a
 * power of two of slots, at most half full; key 0 is empty (no DIE is
 * at offset 0 of .debug_info: a unit header is). */
struct origin_names {
    Dwarf_Off *keys;
    uint32_t *names;
    size_t mask, used;
};

/* The call files already interned, by their index in the unit's file
 * table (NOT_YET: not looked up yet). */
struct call_files {
    uint32_t *names;
    size_t count;
};

struct unit_reader {
    Dwarf_Die *unit;
    struct inline_vector *out;
    inline_intern_fn intern;
    void *context;
    struct origin_names origins;
    struct call_files files;
};

#define NOT_YET (INLINE_NONE - 1)

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

static size_t origin_slot(const struct origin_names *origins, Dwarf_Off key)
{
    size_t slot = (size_t)((key * 0x9e3779b97f4a7c15u) >> 20) & origins->mask;
    while (origins->keys[slot] != 0 && origins->keys[slot] != key)
        slot = (slot + 1) & origins->mask;
    return slot;
}

/* Room for one more origin; 0, or -ENOMEM (the cache is then only
 * not used: the name is found the long way). */
static int origins_reserve(struct origin_names *origins)
{
    if (origins->keys != NULL && (origins->used + 1) * 2 <= origins->mask + 1)
        return 0;
    size_t slots = origins->keys == NULL ? 1024 : (origins->mask + 1) * 2;
    struct origin_names grown = { calloc(slots, sizeof *grown.keys),
                                  malloc(slots * sizeof *grown.names), slots - 1, 0 };
    if (grown.keys == NULL || grown.names == NULL) {
        free(grown.keys);
        free(grown.names);
        return -ENOMEM;
    }
    for (size_t i = 0; origins->keys != NULL && i <= origins->mask; i++)
        if (origins->keys[i] != 0) {
            size_t slot = origin_slot(&grown, origins->keys[i]);
            grown.keys[slot] = origins->keys[i];
            grown.names[slot] = origins->names[i];
            grown.used++;
        }
    free(origins->keys);
    free(origins->names);
    *origins = grown;
    return 0;
}

/* The interned name of the inlined call DIE, through the cache when it
 * has an abstract origin (ORIGIN, NULL if none). */
static uint32_t call_name(struct unit_reader *reader, Dwarf_Die *die, Dwarf_Attribute *origin_ref,
                          int *error)
{
    Dwarf_Die origin_die;
    if (origin_ref == NULL || dwarf_formref_die(origin_ref, &origin_die) == NULL)
        return intern_or_none(reader, inlined_name(die), error);
    Dwarf_Off origin = dwarf_dieoffset(&origin_die);
    if (origin == 0 || origin == (Dwarf_Off)-1)
        return intern_or_none(reader, inlined_name(die), error);
    struct origin_names *origins = &reader->origins;
    if (origins->keys != NULL) {
        size_t slot = origin_slot(origins, origin);
        if (origins->keys[slot] == origin)
            return origins->names[slot];
    }
    uint32_t name = intern_or_none(reader, inlined_name(die), error);
    if (*error == 0 && origins_reserve(origins) == 0) {
        size_t slot = origin_slot(origins, origin);
        origins->keys[slot] = origin;
        origins->names[slot] = name;
        origins->used++;
    }
    return name;
}

/* The interned path of file VALUE of the unit's table, through the
 * cache (one interning per file of a unit, not one per call). */
static uint32_t call_file(struct unit_reader *reader, Dwarf_Word value, int *error)
{
    Dwarf_Files *files;
    size_t file_count;
    if (dwarf_getsrcfiles(reader->unit, &files, &file_count) != 0 || value >= file_count)
        return INLINE_NONE;
    struct call_files *cache = &reader->files;
    if (cache->names == NULL && (cache->names = malloc(file_count * sizeof *cache->names)) != NULL) {
        cache->count = file_count;
        for (size_t i = 0; i < file_count; i++)
            cache->names[i] = NOT_YET;
    }
    if (cache->names != NULL && value < cache->count && cache->names[value] != NOT_YET)
        return cache->names[value];
    uint32_t name = intern_or_none(reader, dwarf_filesrc(files, value, NULL, NULL), error);
    if (*error == 0 && cache->names != NULL && value < cache->count)
        cache->names[value] = name;
    return name;
}

/* The attributes of an inlined call that the reader uses, found in one
 * walk over them (dwarf_getattrs): dwarf_attr, dwarf_lowpc and
 * dwarf_ranges each walk a DIE's attributes from its first again, six
 * walks a call (15% of the C++ benchmark's build). */
enum {
    HAS_ORIGIN = 1 << 0,
    HAS_CALL_FILE = 1 << 1,
    HAS_CALL_LINE = 1 << 2,
    HAS_LOW_PC = 1 << 3,
    HAS_HIGH_PC = 1 << 4,
    HAS_RANGES = 1 << 5,
};

struct call_attributes {
    Dwarf_Attribute origin, call_file, call_line, low_pc, high_pc;
    unsigned found;
};

static int note_attribute(Dwarf_Attribute *attribute, void *context)
{
    struct call_attributes *call = context;
    switch (dwarf_whatattr(attribute)) {
    case DW_AT_abstract_origin: call->origin = *attribute; call->found |= HAS_ORIGIN; break;
    case DW_AT_call_file: call->call_file = *attribute; call->found |= HAS_CALL_FILE; break;
    case DW_AT_call_line: call->call_line = *attribute; call->found |= HAS_CALL_LINE; break;
    case DW_AT_low_pc: call->low_pc = *attribute; call->found |= HAS_LOW_PC; break;
    case DW_AT_high_pc: call->high_pc = *attribute; call->found |= HAS_HIGH_PC; break;
    case DW_AT_ranges: call->found |= HAS_RANGES; break;
    default: break;
    }
    return DWARF_CB_OK;
}

/* [*LOW, *HIGH) from DW_AT_low_pc and DW_AT_high_pc, as dwarf_highpc
 * reads them: an address, or (DWARF 4 on) an offset from low_pc. */
static int pc_range(struct call_attributes *call, Dwarf_Addr *low, Dwarf_Addr *high)
{
    Dwarf_Word offset;
    if ((call->found & (HAS_LOW_PC | HAS_HIGH_PC)) != (HAS_LOW_PC | HAS_HIGH_PC) ||
        dwarf_formaddr(&call->low_pc, low) != 0)
        return 0;
    if (dwarf_formaddr(&call->high_pc, high) == 0)
        return 1;
    if (dwarf_formudata(&call->high_pc, &offset) != 0)
        return 0;
    *high = *low + offset;
    return 1;
}

/* The call of DIE (its name, where it was called), appended. */
static int push_call(struct unit_reader *reader, Dwarf_Die *die, struct call_attributes *attributes,
                     uint32_t parent)
{
    struct inline_vector *out = reader->out;
    Dwarf_Word value;
    int error = 0;
    struct inline_call call = { INLINE_NONE, INLINE_NONE, 0, parent };

    if ((attributes->found & HAS_CALL_FILE) && dwarf_formudata(&attributes->call_file, &value) == 0)
        call.call_file = call_file(reader, value, &error);
    if ((attributes->found & HAS_CALL_LINE) && dwarf_formudata(&attributes->call_line, &value) == 0)
        call.call_line = value <= UINT32_MAX ? (uint32_t)value : 0;
    call.name = call_name(reader, die, attributes->found & HAS_ORIGIN ? &attributes->origin : NULL,
                          &error);
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
            result = read_children(reader, &child, parent, depth, nesting + 1);
            break;
        default:
            /* Types, variables, parameters: no code. A class's members
             * are declarations: GCC and clang put each member function's
             * definition, a local class's and a lambda's too, at the
             * scope that holds the class (DW_AT_specification), never
             * inside it (0 of 31,288 code DIEs of the C++ benchmark), so
             * its members are not read (4% of the build). */
            break;
        }
    } while (result == 0 && dwarf_siblingof(&child, &child) == 0);
    return result;
}

/* DIE's address ranges, appended as call CALL's. */
static int push_ranges(struct inline_vector *out, Dwarf_Die *die,
                       struct call_attributes *attributes, uint32_t call, uint32_t depth)
{
    Dwarf_Addr base, low, high;
    ptrdiff_t offset = 0;

    if (pc_range(attributes, &low, &high)) {
        struct inline_range range = { low, high, call, depth };
        return low < high ? push_range(out, range) : 0;
    }
    if (!(attributes->found & HAS_RANGES))
        return 0;
    while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) {
        struct inline_range range = { low, high, call, depth };
        if (low < high && push_range(out, range) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int read_inlined(struct unit_reader *reader, Dwarf_Die *die, uint32_t parent,
                        uint32_t depth, int nesting)
{
    struct inline_vector *out = reader->out;
    size_t first_range = out->range_count;
    uint32_t call = (uint32_t)out->call_count;
    struct call_attributes attributes = { .found = 0 };

    if (out->call_count >= INLINE_NONE - 1)
        return 0;
    if (dwarf_getattrs(die, note_attribute, &attributes, 0) != 1)
        return 0; /* damaged: its attributes could not all be read */
    if (push_ranges(out, die, &attributes, call, depth) < 0)
        return -ENOMEM;
    if (out->range_count == first_range)
        return 0;
    int result = push_call(reader, die, &attributes, parent);
    if (result < 0)
        return result;
    return read_children(reader, die, call, depth, nesting);
}

int inline_table_read_unit(Dwarf_Die *unit, struct inline_vector *out, inline_intern_fn intern,
                           void *context)
{
    struct unit_reader reader = { unit, out, intern, context, { 0 }, { 0 } };
    int result = read_children(&reader, unit, INLINE_NONE, 0, 0);
    free(reader.origins.keys);
    free(reader.origins.names);
    free(reader.files.names);
    return result;
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
    run_sort(ranges, count, sizeof *ranges, by_start);
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
