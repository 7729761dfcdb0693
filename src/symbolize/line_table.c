/* line_table.c: read DWARF line tables with libdw.
 * World: normal (libdw, malloc). */
#include "line_table.h"
#include "answer_filter.h"
#include "../base/array_grow.h"
#include "../base/run_sort.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* What one row takes in the index (struct index_line). */
#define LINE_PACKED_BYTES 16

/* File names (and the names of inlined calls) are interned through a
 * small open-addressing table. Each slot keeps the name's hash beside its
 * index, so that growing does not hash the names again and a probe
 * compares strings only when the hashes agree: C++ names run to
 * kilobytes. */
struct intern_slot {
    uint32_t index; /* file index + 1, 0 empty */
    uint32_t hash;
};

struct file_interner {
    struct line_vector *lines;
    struct intern_slot *slots;
    size_t slot_count;
};

/* A word at a time: hashing C++ names byte by byte was a tenth of
 * reading the inlined calls. */
static uint32_t hash_name(const char *name, size_t length)
{
    uint64_t hash = length * 0x9e3779b97f4a7c15u, word;
    size_t at = 0;
    for (; at + sizeof word <= length; at += sizeof word) {
        memcpy(&word, name + at, sizeof word);
        hash = ((hash ^ word) * 0x9e3779b97f4a7c15u);
        hash ^= hash >> 29;
    }
    for (word = 0; at < length; at++)
        word = word << 8 | (unsigned char)name[at];
    hash = (hash ^ word) * 0x9e3779b97f4a7c15u;
    return (uint32_t)(hash >> 32);
}

static int interner_grow(struct file_interner *interner)
{
    size_t count = interner->slot_count ? interner->slot_count * 2 : 256;
    struct intern_slot *slots = calloc(count, sizeof *slots);
    if (slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < interner->slot_count; i++) {
        if (interner->slots[i].index == 0)
            continue;
        size_t at = interner->slots[i].hash & (count - 1);
        while (slots[at].index != 0)
            at = (at + 1) & (count - 1);
        slots[at] = interner->slots[i];
    }
    free(interner->slots);
    interner->slots = slots;
    interner->slot_count = count;
    return 0;
}

static long intern_file(struct file_interner *interner, const char *name)
{
    struct line_vector *lines = interner->lines;

    if ((lines->file_count + 1) * 2 > interner->slot_count && interner_grow(interner) < 0)
        return -ENOMEM;
    size_t length = strlen(name);
    uint32_t hash = hash_name(name, length);
    size_t mask = interner->slot_count - 1, at = hash & mask;
    for (; interner->slots[at].index != 0; at = (at + 1) & mask) {
        uint32_t index = interner->slots[at].index - 1;
        if (interner->slots[at].hash == hash && strcmp(lines->files[index], name) == 0)
            return index;
    }
    if (array_grow(&lines->files, &lines->file_capacity, lines->file_count,
                   sizeof *lines->files, 64) < 0)
        return -ENOMEM;
    char *copy = malloc(length + 1);
    if (copy == NULL)
        return -ENOMEM;
    memcpy(copy, name, length + 1);
    lines->files[lines->file_count] = copy;
    interner->slots[at] = (struct intern_slot){ (uint32_t)++lines->file_count, hash };
    return (long)lines->file_count - 1;
}

static int push_row(struct line_vector *out, struct line_entry row)
{
    if (array_grow(&out->entries, &out->capacity, out->count, sizeof *out->entries, 1024) < 0)
        return -ENOMEM;
    out->entries[out->count++] = row;
    return 0;
}

static long intern_text(void *context, const char *text)
{
    return intern_file(context, text);
}

/* The bytes LINES would take with ROWS rows (the budget's measure). */
static size_t budget_bytes(const struct line_vector *lines, size_t rows)
{
    return rows * LINE_PACKED_BYTES + inline_table_budget_bytes(&lines->inlines);
}

static int read_rows(Dwarf_Die *unit, struct file_interner *interner, size_t budget)
{
    struct line_vector *out = interner->lines;
    Dwarf_Lines *rows;
    size_t count;
    /* Rows name their file with a pointer into the unit's file table, and
     * runs of rows share one: the last one's index, without a hash. */
    const char *last_file = NULL;
    long last_index = 0;

    if (dwarf_getsrclines(unit, &rows, &count) != 0)
        return 0;
    for (size_t i = 0; i < count; i++) {
        Dwarf_Line *row = dwarf_onesrcline(rows, i);
        Dwarf_Addr address;
        int line = 0;
        bool end = false;
        if (row == NULL || dwarf_lineaddr(row, &address) != 0)
            continue;
        dwarf_lineendsequence(row, &end);
        const char *file = dwarf_linesrc(row, NULL, NULL);
        if (!end && (dwarf_lineno(row, &line) != 0 || file == NULL))
            continue;
        if (budget_bytes(out, out->count + 1) > budget)
            return -E2BIG;
        long file_index = 0;
        if (!end) {
            if (file != last_file)
                last_index = intern_file(interner, file);
            if (last_index < 0)
                return (int)last_index;
            last_file = file;
            file_index = last_index;
        }
        struct line_entry entry = { address, (uint32_t)file_index, end ? 0u : (uint32_t)line,
                                    (uint32_t)out->count };
        if (push_row(out, entry) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* One unit's rows and inlined calls, kept whole or not at all: a cut
 * sequence would have no end, a cut inline tree would give wrong chains. */
static int read_unit(Dwarf_Die *unit, struct file_interner *interner, size_t budget)
{
    struct line_vector *out = interner->lines;
    size_t rows = out->count, calls = out->inlines.call_count;
    size_t ranges = out->inlines.range_count;

    int result = read_rows(unit, interner, budget);
    if (result == 0 && out->with_inlines)
        result = inline_table_read_unit(unit, &out->inlines, intern_text, interner);
    if (result == 0 && budget_bytes(out, out->count) > budget)
        result = -E2BIG;
    if (result == -E2BIG) {
        out->count = rows;
        inline_table_cut(&out->inlines, calls, ranges);
    }
    return result;
}

/* libdw's own out-of-memory handler prints "libdw: Cannot allocate
 * memory" and exits the process (elfutils __libdw_oom): ours leaves the
 * read instead, which then fails with -ENOMEM. elfutils 0.188 releases its
 * allocation lock before it calls the handler, so dwarf_end after the jump
 * is sound; what the interrupted call had malloc'd is lost. Only the Dwarf
 * opened here has it: split-DWARF (.dwo) and dwz files that libdw opens
 * by itself keep the default handler. */
static __thread jmp_buf *oom_escape;

__attribute__((noreturn)) static void leave_on_oom(void)
{
    longjmp(*oom_escape, 1);
}

/* libdw (elfutils 0.188) measures the file and directory names of a line
 * table that point into .debug_str or .debug_line_str with strlen: a
 * string section whose last byte is not NUL (damaged, or hostile) is read
 * past its end, into the bytes after the section's buffer (found by
 * fuzz_elf_index on a module file, where libelf reads each section into a
 * buffer of its own: a heap over-read). Such a file gives no lines. Run
 * after dwarf_begin_elf, which has inflated compressed sections in place. */
static int string_sections_end_in_nul(Elf *elf)
{
    static const char *const names[] = { ".debug_str", ".debug_line_str", ".zdebug_str",
                                         ".zdebug_line_str", ".debug_str.dwo", NULL };
    size_t strings_index;
    Elf_Scn *section = NULL;

    if (elf_getshdrstrndx(elf, &strings_index) != 0)
        return 1; /* no section names: libdw finds none of its sections either */
    while ((section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == NULL || header.sh_type == SHT_NOBITS)
            continue;
        const char *name = elf_strptr(elf, strings_index, header.sh_name);
        int wanted = 0;
        for (int i = 0; name != NULL && names[i] != NULL && !wanted; i++)
            wanted = strcmp(name, names[i]) == 0;
        if (!wanted)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        if (data != NULL && data->d_size > 0 &&
            (data->d_buf == NULL || ((const char *)data->d_buf)[data->d_size - 1] != '\0'))
            return 0;
    }
    return 1;
}

/* Whether OUT's filter leaves UNIT out; one with a line table is noted,
 * so that the module counts as having lines of its own, as it would read
 * whole. */
static int skipped(struct line_vector *out, Dwarf_Die *unit)
{
    if (out->filter == NULL || answer_filter_unit(out->filter, unit))
        return 0;
    if (dwarf_hasattr(unit, DW_AT_stmt_list))
        out->skipped_lines = 1;
    return 1;
}

long line_table_read(Elf *elf, size_t budget, struct line_vector *out)
{
    struct file_interner interner = { out, NULL, 0 };
    Dwarf *dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    Dwarf_Off offset = 0, next;
    size_t header_size;
    size_t before = out->count;
    volatile int result = 0;
    jmp_buf escape, *volatile outer = oom_escape;

    if (dwarf == NULL)
        return 0;
    if (!string_sections_end_in_nul(elf)) {
        dwarf_end(dwarf);
        return 0;
    }
    if (setjmp(escape) != 0) {
        result = -ENOMEM;
        goto done;
    }
    oom_escape = &escape;
    dwarf_new_oom_handler(dwarf, leave_on_oom);
    while (result == 0 &&
           dwarf_nextcu(dwarf, offset, &next, &header_size, NULL, NULL, NULL) == 0) {
        Dwarf_Die unit;
        if (dwarf_offdie(dwarf, offset + header_size, &unit) != NULL && !skipped(out, &unit))
            result = read_unit(&unit, &interner, budget);
        offset = next;
    }
done:
    oom_escape = outer;
    free(interner.slots);
    dwarf_end(dwarf);
    return result < 0 ? result : (long)(out->count - before);
}

/* At one address an end-of-sequence row sorts first, so that a sequence
 * starting where another ends keeps its line. */
static int by_address(const void *a, const void *b)
{
    const struct line_entry *left = a, *right = b;
    if (left->address != right->address)
        return left->address < right->address ? -1 : 1;
    if ((left->line != 0) != (right->line != 0))
        return left->line != 0 ? 1 : -1;
    return left->order < right->order ? -1 : left->order > right->order;
}

int line_table_finish(struct line_vector *lines)
{
    size_t kept = 0;

    /* Of several rows at one address the last in DWARF order wins. */
    run_sort(lines->entries, lines->count, sizeof *lines->entries, by_address);
    for (size_t i = 0; i < lines->count; i++) {
        if (kept > 0 && lines->entries[kept - 1].address == lines->entries[i].address)
            kept--;
        lines->entries[kept++] = lines->entries[i];
    }
    lines->count = kept;
    return inline_table_finish(&lines->inlines);
}

size_t line_table_packed_size(const struct line_vector *lines)
{
    size_t bytes = lines->count * LINE_PACKED_BYTES + inline_table_packed_size(&lines->inlines);
    for (size_t i = 0; i < lines->file_count; i++)
        bytes += strlen(lines->files[i]) + 1 + sizeof(uint32_t);
    return bytes;
}

void line_vector_free(struct line_vector *lines)
{
    for (size_t i = 0; i < lines->file_count; i++)
        free(lines->files[i]);
    free(lines->files);
    free(lines->entries);
    inline_vector_free(&lines->inlines);
    memset(lines, 0, sizeof *lines);
}
