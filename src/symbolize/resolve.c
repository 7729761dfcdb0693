/* resolve.c: backtrace_resolve, structured frames with inlined callers.
 * World: normal (libdwfl reads /proc/self/maps and the module files, and
 * follows build-id and debuglink to separate debug files; malloc).
 *
 * Module, function and offset come from the symbol index, so they agree
 * with backtrace_symbols (the function demangled, as the index stores it);
 * file, line, column and the inline chain come from DWARF through libdwfl,
 * for every module, an inlined function's linkage name demangled here;
 * or, with BACKTRACE_INDEX_ONLY, from the index's line and inline tables
 * as the crash report reads them (no libdw: a heap profile written at
 * exit, issue 24, would otherwise open libc's debug file and double the
 * process's peak memory). */
#define _GNU_SOURCE
#include "execinfo_ex.h"
#include "debug_file.h"
#include "demangle.h"
#include "index.h"
#include "lookup.h"
#include "../base/array_grow.h"
#include "../base/environment.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A frame whose strings still point into the index or into libdw. */
struct pending {
    struct backtrace_frame *frames;
    size_t count, capacity;
    char **owned;         /* module paths copied from the maps fallback, demangled names */
    size_t owned_count, owned_capacity;
};

/* TEXT (malloc'd) freed with PENDING; NULL if it could not be listed. */
static char *pending_own(struct pending *pending, char *text)
{
    if (text == NULL || array_grow(&pending->owned, &pending->owned_capacity,
                                   pending->owned_count, sizeof *pending->owned, 16) < 0) {
        free(text);
        return NULL;
    }
    pending->owned[pending->owned_count++] = text;
    return text;
}

static int pending_push(struct pending *pending, const struct backtrace_frame *frame)
{
    if (array_grow(&pending->frames, &pending->capacity, pending->count,
                   sizeof *pending->frames, 64) < 0)
        return -ENOMEM;
    pending->frames[pending->count++] = *frame;
    return 0;
}

/* NAME demangled, in memory PENDING owns; NAME itself if it is not a
 * mangled name or memory ran out. */
static const char *readable_name(struct pending *pending, const char *name)
{
    char demangled[DEMANGLE_OUTPUT_MAX + 1];
    if (name == NULL || !environment_options()->demangle || demangle_name(name, demangled) == 0)
        return name;
    const char *copy = pending_own(pending, strdup(demangled));
    return copy != NULL ? copy : name;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attribute;
    const char *name = NULL;

    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute) != NULL)
        name = dwarf_formstring(&attribute);
    if (name == NULL && dwarf_attr_integrate(die, DW_AT_name, &attribute) != NULL)
        name = dwarf_formstring(&attribute);
    return name;
}

/* Where the inlined subroutine DIE was called from, in its unit's files. */
static void call_site(Dwarf_Die *unit, Dwarf_Die *die, const char **file, unsigned *line,
                      unsigned *column)
{
    Dwarf_Attribute attribute;
    Dwarf_Word value;
    Dwarf_Files *files;
    size_t file_count;

    *file = NULL;
    *line = *column = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attribute), &value) == 0 &&
        dwarf_getsrcfiles(unit, &files, &file_count) == 0 && value < file_count)
        *file = dwarf_filesrc(files, value, NULL, NULL);
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attribute), &value) == 0)
        *line = (unsigned)value;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_column, &attribute), &value) == 0)
        *column = (unsigned)value;
}

struct source {
    const char *file;
    unsigned line, column;
};

static struct source source_of(Dwfl_Module *module, Dwarf_Addr pc)
{
    struct source source = { NULL, 0, 0 };
    Dwfl_Line *line = module ? dwfl_module_getsrc(module, pc) : NULL;
    int number = 0, column = 0;

    if (line != NULL) {
        source.file = dwfl_lineinfo(line, NULL, &number, &column, NULL, NULL);
        source.line = number > 0 ? (unsigned)number : 0;
        source.column = column > 0 ? (unsigned)column : 0;
    }
    return source;
}

/* The scopes around PC in the DIE tree itself, innermost first: as
 * eu-addr2line -i, dwarf_getscopes finds the innermost, then
 * dwarf_getscopes_die walks its parents. (dwarf_getscopes alone goes on
 * from an inlined subroutine into its abstract origin's scopes: a chain
 * two calls deep lost every call but the innermost.) */
static int concrete_scopes(Dwarf_Die *unit, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    Dwarf_Die *found = NULL;
    int count = dwarf_getscopes(unit, pc, &found);
    *scopes = NULL;
    if (count <= 0) {
        free(found);
        return count < 0 ? 0 : count;
    }
    Dwarf_Die innermost = found[0];
    free(found);
    count = dwarf_getscopes_die(&innermost, scopes);
    return count < 0 ? 0 : count;
}

/* Push one frame per inlined subroutine around PC, innermost first, and
 * leave in *SOURCE the location in the function they were inlined into. */
static int push_inlined(struct pending *pending, Dwfl_Module *module, Dwarf_Addr pc,
                        struct backtrace_frame *base, struct source *source)
{
    Dwarf_Addr bias;
    Dwarf_Die *unit = module ? dwfl_module_addrdie(module, pc, &bias) : NULL;
    Dwarf_Die *scopes = NULL;
    int count = unit ? concrete_scopes(unit, pc - bias, &scopes) : 0;
    int result = 0;

    for (int i = 0; i < count && result == 0; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram)
            break; /* the real function: its frame is the caller's to push */
        if (tag != DW_TAG_inlined_subroutine)
            continue;
        struct backtrace_frame frame = *base;
        frame.function = readable_name(pending, die_name(&scopes[i]));
        frame.offset = 0;
        frame.file = source->file;
        frame.line = source->line;
        frame.column = source->column;
        frame.inlined = 1;
        result = pending_push(pending, &frame);
        call_site(unit, &scopes[i], &source->file, &source->line, &source->column);
    }
    free(scopes);
    return result;
}

/* The index's inlined calls of LOCATION, innermost first, then FRAME with
 * the line where its function makes the outermost call. */
static int push_indexed(struct pending *pending, const struct frame_location *location,
                        struct backtrace_frame *frame)
{
    struct inlined_frame inlined;
    for (unsigned i = 0; lookup_inlined(location, i, &inlined); i++) {
        struct backtrace_frame call = *frame;
        call.function = inlined.function;
        call.offset = 0;
        call.file = inlined.file;
        call.line = inlined.line;
        call.inlined = 1;
        if (pending_push(pending, &call) < 0)
            return -ENOMEM;
    }
    frame->file = location->file;
    frame->line = location->line;
    return pending_push(pending, frame);
}

static int resolve_one(struct pending *pending, Dwfl *dwfl, const struct index_snapshot *snapshot,
                       uintptr_t address, int exact, int index, int index_only)
{
    struct frame_location location;
    struct backtrace_frame frame;
    Dwarf_Addr pc = exact || address == 0 ? address : address - 1;

    lookup_frame(snapshot, address, (uintptr_t)pc, index_only, &location);
    if (location.module_path == location.fallback_path) {
        /* That path lives on this stack frame: keep a copy, or no path. */
        location.module_path = pending_own(pending, strdup(location.fallback_path));
    }
    memset(&frame, 0, sizeof frame);
    frame.address = (void *)address;
    frame.index = index;
    frame.module = location.module_path;
    frame.module_base = (void *)location.module_bias;
    frame.function = location.function_demangled;
    frame.offset = location.function ? address - location.function_address
                                     : address - location.module_bias;
    if (index_only)
        return push_indexed(pending, &location, &frame);

    Dwfl_Module *module = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
    struct source source = source_of(module, pc);
    if (push_inlined(pending, module, pc, &frame, &source) < 0)
        return -ENOMEM;
    frame.file = source.file;
    frame.line = source.line;
    frame.column = source.column;
    return pending_push(pending, &frame);
}

static size_t string_bytes(const char *text)
{
    return text ? strlen(text) + 1 : 0;
}

static char *copy_string(char **cursor, const char *text)
{
    if (text == NULL)
        return NULL;
    size_t length = strlen(text) + 1;
    char *copy = memcpy(*cursor, text, length);
    *cursor += length;
    return copy;
}

/* One block: the frames, then every string they point to. */
static struct backtrace_frame *pack(const struct pending *pending)
{
    size_t bytes = pending->count * sizeof(struct backtrace_frame);
    for (size_t i = 0; i < pending->count; i++) {
        const struct backtrace_frame *frame = &pending->frames[i];
        bytes += string_bytes(frame->module) + string_bytes(frame->function) +
                 string_bytes(frame->file);
    }
    struct backtrace_frame *block = malloc(bytes ? bytes : 1);
    if (block == NULL)
        return NULL;
    char *cursor = (char *)(block + pending->count);
    for (size_t i = 0; i < pending->count; i++) {
        block[i] = pending->frames[i];
        block[i].module = copy_string(&cursor, pending->frames[i].module);
        block[i].function = copy_string(&cursor, pending->frames[i].function);
        block[i].file = copy_string(&cursor, pending->frames[i].file);
    }
    return block;
}

/* libdwfl's search path (the module's directory, its .debug/, then each
 * absolute root in turn), with the debug roots the index uses
 * (debug_file.h), so that both find the same separate debug files. Read
 * at the first resolve. */
static char debuginfo_text[DEBUG_FILE_ROOTS_MAX + 16];
static char *debuginfo_pointer;
static pthread_once_t debuginfo_once = PTHREAD_ONCE_INIT;

static void debuginfo_set(void)
{
    char roots[DEBUG_FILE_ROOTS_MAX];
    debug_file_roots(roots, sizeof roots);
    int length = snprintf(debuginfo_text, sizeof debuginfo_text, ":.debug:%s", roots);
    debuginfo_pointer = length > 0 && (size_t)length < sizeof debuginfo_text ? debuginfo_text : NULL;
}

static Dwfl *open_self(void)
{
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &debuginfo_pointer,
    };
    pthread_once(&debuginfo_once, debuginfo_set);
    elf_version(EV_CURRENT); /* the index may never have read a file (a warm cache) */
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (dwfl == NULL)
        return NULL;
    if (dwfl_linux_proc_report(dwfl, getpid()) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0) {
        dwfl_end(dwfl);
        return NULL;
    }
    return dwfl;
}

static void free_pending(struct pending *pending)
{
    for (size_t i = 0; i < pending->owned_count; i++)
        free(pending->owned[i]);
    free(pending->owned);
    free(pending->frames);
}

__attribute__((visibility("default")))
int backtrace_resolve(void *const *buffer, int size, int flags,
                      struct backtrace_frame **frames)
{
    struct pending pending = { .frames = NULL };
    int result = 0;

    if (frames == NULL || (buffer == NULL && size > 0) || size < 0) {
        if (frames != NULL)
            *frames = NULL;
        errno = EINVAL;
        return -1;
    }
    *frames = NULL;
    backtrace_refresh_index();
    int index_only = (flags & BACKTRACE_INDEX_ONLY) != 0;
    /* NULL: no lines, names still from the index */
    Dwfl *dwfl = index_only ? NULL : open_self();
    const struct index_snapshot *snapshot = index_acquire();
    for (int i = 0; i < size && result == 0; i++)
        result = resolve_one(&pending, dwfl, snapshot, (uintptr_t)buffer[i],
                             i == 0 && (flags & BACKTRACE_FIRST_IS_PC), i, index_only);
    if (result == 0 && (*frames = pack(&pending)) == NULL)
        result = -ENOMEM;
    free_pending(&pending);
    index_release();
    if (dwfl != NULL)
        dwfl_end(dwfl);
    if (result < 0) {
        errno = -result;
        return -1;
    }
    return (int)pending.count;
}
