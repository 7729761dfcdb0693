/* module_data.c: read one module's symbols, lines and inlined calls and pack them into a
 * read-only mapping that the signal-safe world can search.
 * World: normal (libelf, libdw, malloc, open, mmap).
 *
 * Files are read with ELF_C_READ (pread), never mapped: a file truncated
 * or rewritten while we read it gives errors, not SIGBUS.
 *
 * libelf and libdw answer an allocation that failed as "no such data";
 * the failed malloc leaves errno ENOMEM, which is checked after each step
 * (cleared before it). A step that ran out of memory does not stop the
 * build: what was read is kept, and the result says it may be incomplete,
 * so that the index can read the module again later. A malloc that
 * succeeds may also leave ENOMEM (glibc's sbrk fallback): that false alarm
 * costs a second read, never names. An allocation failure that libdw
 * swallows itself (decompressing a section, then overwriting errno) is not
 * seen: the module then lacks its lines. */
#define _GNU_SOURCE
#include "module_data.h"
#include "answer_filter.h"
#include "debug_file.h"
#include "demangled_names.h"
#include "file_probes.h"
#include "line_table.h"
#include "symbol_table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct opened_elf {
    Elf *elf;
    int fd;
};

static void opened_close(struct opened_elf *opened)
{
    if (opened->elf != NULL)
        elf_end(opened->elf);
    if (opened->fd >= 0)
        close(opened->fd);
    opened->elf = NULL;
    opened->fd = -1;
}

/* The loaded file itself, if it is still the one that was loaded. */
static int open_module(const struct module_info *module, struct opened_elf *out)
{
    out->fd = -1;
    if (module->memory_image != NULL) {
        out->elf = elf_memory((char *)module->memory_image, module->memory_size);
    } else {
        out->fd = elf_file_open(module->file_path);
        if (out->fd < 0)
            return -1;
        out->elf = elf_begin(out->fd, ELF_C_READ, NULL);
    }
    if (out->elf == NULL && errno == ENOMEM)
        goto refuse;
    if (out->elf == NULL || elf_kind(out->elf) != ELF_K_ELF) {
        errno = ENOEXEC;
        goto refuse;
    }
    if (module->build_id_length > 0) {
        unsigned char id[MODULE_BUILD_ID_MAX];
        unsigned length = elf_file_build_id(out->elf, id, sizeof id);
        if (length != module->build_id_length || memcmp(id, module->build_id, length) != 0) {
            /* Replaced on disk since it was loaded; unless no id could be
             * read for want of memory. */
            errno = length == 0 && errno == ENOMEM ? ENOMEM : ESTALE;
            goto refuse;
        }
    }
    return 0;
refuse:
    opened_close(out);
    return -1;
}

struct gathered {
    struct symbol_vector symbols;
    struct demangled_names demangled;   /* empty with demangle=0 */
    struct line_vector lines;
    int lines_truncated;
    int out_of_memory;     /* some step ran out: the result may lack some */
};

/* Run after a step whose errno was cleared before it. */
static void note_memory(struct gathered *g, int result)
{
    if (result == -ENOMEM || errno == ENOMEM)
        g->out_of_memory = 1;
}

/* A hostile file can make every symbol name one long string (all st_name
 * equal, a table without NUL but its last byte): names are stored cut at
 * NAME_STORED_MAX, and the names of one module take at most NAMES_BUDGET,
 * the symbols past it being left out, so that neither time nor memory
 * grows with count x length, and offsets fit 32 bits. */
#define NAME_STORED_MAX 4096
#define NAMES_BUDGET ((size_t)256 << 20)

/* The bytes NAME takes stored, its NUL included; *READ counts the bytes
 * looked at. */
static size_t stored_length(const char *name, uint64_t *read)
{
    size_t length = strnlen(name, NAME_STORED_MAX - 1);
    *read += length + (length < NAME_STORED_MAX - 1);
    return length + 1;
}

/* The bytes symbol I's demangled name takes stored, 0 if it has none. */
static size_t demangled_length(const struct gathered *g, size_t i)
{
    const char *demangled = demangled_name_of(&g->demangled, i);
    return demangled != NULL ? strlen(demangled) + 1 : 0;
}

/* Bytes of the packed data; *SYMBOLS_KEPT: how many symbols fit, *NAMES
 * the bytes of their names (demangled ones too) and the file names. */
static size_t packed_size(const struct gathered *g, size_t *symbols_kept, size_t *names_bytes,
                          uint64_t *read)
{
    size_t names = 0, kept = 0;
    for (size_t i = 0; i < g->lines.file_count; i++)
        names += stored_length(g->lines.files[i], read);
    for (; kept < g->symbols.count; kept++) {
        size_t length = stored_length(g->symbols.entries[kept].name, read) +
                        demangled_length(g, kept);
        if (names + length > NAMES_BUDGET)
            break;
        names += length;
    }
    *symbols_kept = kept;
    *names_bytes = names;
    return sizeof(struct module_data) + kept * sizeof(struct index_symbol) +
           g->lines.count * sizeof(struct index_line) +
           g->lines.inlines.call_count * sizeof(struct index_inline) +
           g->lines.inlines.segment_count * sizeof(struct index_inline_range) + names;
}

/* Names and paths come from files that may be damaged or hostile: a control
 * byte would break glibc's one-frame-per-line output or drive a terminal, so
 * it is stored as '?'. Bytes from 0x80 stay (UTF-8 identifiers are legal C). */
#define BYTES_OF(byte) (UINT64_MAX / 255 * (byte))

/* Whether a byte of WORD is below 0x20 or is 0x7f (the bit tricks of
 * "Bit Twiddling Hacks": a borrow into a byte's top bit). */
static int has_control_byte(uint64_t word)
{
    uint64_t delete = word ^ BYTES_OF(0x7f);
    return ((((word - BYTES_OF(0x20)) & ~word) | ((delete - BYTES_OF(1)) & ~delete)) &
            BYTES_OF(0x80)) != 0;
}

/* A word at a time where no byte needs replacing: the names of a C++
 * program are megabytes, copied byte by byte they were 5% of its build. */
static void copy_printable(char *to, const char *from, size_t length)
{
    size_t i = 0;
    for (uint64_t word; i + sizeof word < length; i += sizeof word) {
        memcpy(&word, from + i, sizeof word);
        if (has_control_byte(word))
            break;
        memcpy(to + i, &word, sizeof word);
    }
    for (; i + 1 < length; i++) {
        unsigned char byte = (unsigned char)from[i];
        to[i] = byte < 0x20 || byte == 0x7f ? '?' : (char)byte;
    }
    to[length - 1] = '\0';
}

static uint32_t *file_offsets_fill(const struct gathered *g, char *strings, size_t *used,
                                   uint64_t *read)
{
    uint32_t *offsets = malloc((g->lines.file_count + 1) * sizeof *offsets);
    if (offsets == NULL)
        return NULL;
    for (size_t i = 0; i < g->lines.file_count; i++) {
        size_t length = stored_length(g->lines.files[i], read);
        copy_printable(strings + *used, g->lines.files[i], length);
        *read += length - 1;
        offsets[i] = (uint32_t)*used;
        *used += length;
    }
    return offsets;
}

static uint32_t string_or_none(const uint32_t *file_offsets, uint32_t index)
{
    return index == INLINE_NONE ? INDEX_INLINE_NONE : file_offsets[index];
}

/* The inlined calls and their segments, after the lines. */
static void pack_inlines(const struct inline_vector *from, const uint32_t *file_offsets,
                         struct index_inline *calls, struct index_inline_range *ranges)
{
    for (size_t i = 0; i < from->call_count; i++) {
        const struct inline_call *call = &from->calls[i];
        calls[i] = (struct index_inline){ string_or_none(file_offsets, call->name),
                                          string_or_none(file_offsets, call->call_file),
                                          call->call_line, call->parent };
    }
    for (size_t i = 0; i < from->segment_count; i++)
        ranges[i] = (struct index_inline_range){ from->segments[i].from, from->segments[i].call,
                                                 0 };
}

/* Symbol I's name, then its demangled name if it has one, at *USED. */
static struct index_symbol symbol_fill(const struct gathered *g, size_t i, char *strings,
                                       size_t *used, uint64_t *read)
{
    const struct symbol_entry *entry = &g->symbols.entries[i];
    size_t length = stored_length(entry->name, read);
    struct index_symbol symbol = { entry->start, entry->size, (uint32_t)*used, (uint32_t)*used };
    copy_printable(strings + *used, entry->name, length);
    *read += length - 1;
    *used += length;
    size_t demangled = demangled_length(g, i);
    if (demangled > 0) {
        symbol.demangled = (uint32_t)*used;
        copy_printable(strings + *used, demangled_name_of(&g->demangled, i), demangled);
        *used += demangled;
    }
    return symbol;
}

static const struct module_data *pack(const struct gathered *g, int demangle)
{
    size_t symbol_count, names;
    uint64_t read = g->symbols.name_bytes_read;
    size_t bytes = packed_size(g, &symbol_count, &names, &read);
    /* Every page is written below: populated in one call, they cost half
     * what a fault each costs (3.6 MB for issue 15's C++ benchmark). */
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    struct module_data *data = map;
    struct index_symbol *symbols = (struct index_symbol *)(data + 1);
    struct index_line *lines = (struct index_line *)(symbols + symbol_count);
    struct index_inline *inlines = (struct index_inline *)(lines + g->lines.count);
    struct index_inline_range *ranges =
        (struct index_inline_range *)(inlines + g->lines.inlines.call_count);
    char *strings = (char *)(ranges + g->lines.inlines.segment_count);
    size_t used = 0;

    uint32_t *file_offsets = file_offsets_fill(g, strings, &used, &read);
    if (file_offsets == NULL) {
        munmap(map, bytes);
        return NULL;
    }
    for (size_t i = 0; i < symbol_count; i++)
        symbols[i] = symbol_fill(g, i, strings, &used, &read);
    for (size_t i = 0; i < g->lines.count; i++) {
        const struct line_entry *row = &g->lines.entries[i];
        lines[i] = (struct index_line){ row->address, file_offsets[row->file], row->line };
    }
    pack_inlines(&g->lines.inlines, file_offsets, inlines, ranges);
    free(file_offsets);
    *data = (struct module_data){ symbols, symbol_count, lines, g->lines.count,
                                  strings, bytes, g->lines_truncated, demangle, names, read, 0,
                                  inlines, g->lines.inlines.call_count, ranges,
                                  g->lines.inlines.segment_count, NULL, 0 };
    mprotect(map, bytes, PROT_READ);
    return data;
}

static void gather_symbols(const struct module_info *module, struct opened_elf *file,
                           struct opened_elf *debug, struct gathered *g,
                           struct file_probes *probes)
{
    errno = 0;
    int has_dynsym = symbol_table_read(file->elf, SHT_DYNSYM, &g->symbols);
    if (has_dynsym == 0)   /* no section headers, perhaps: as ld.so finds it */
        has_dynsym = dynamic_symbols_read(file->elf, &g->symbols);
    note_memory(g, has_dynsym);
    errno = 0;
    int has_symtab = symbol_table_read(file->elf, SHT_SYMTAB, &g->symbols);
    note_memory(g, has_symtab);
    if (has_symtab == 0 && module->memory_image == NULL) {
        errno = 0;
        debug->elf = debug_file_open(file->elf, module->file_path, module->build_id,
                                     module->build_id_length, &debug->fd, probes);
        if (debug->elf == NULL && errno == ENOMEM)
            g->out_of_memory = 1;
        if (debug->elf != NULL) {
            errno = 0;
            note_memory(g, symbol_table_read(debug->elf, SHT_SYMTAB, &g->symbols));
        }
    }
    if (g->symbols.filter != NULL)
        answer_filter_symbols(g->symbols.filter, &g->symbols);
    symbol_table_finish(&g->symbols);
}

/* After the symbols are final (sorted, aliases dropped), so that only the
 * names kept are demangled. Running out leaves every name mangled. */
static void gather_demangled(struct gathered *g)
{
    if (demangled_names_gather(&g->symbols, NAMES_BUDGET, &g->demangled) < 0)
        g->out_of_memory = 1;
}

/* Lines are kept whole or not at all: a table cut by running out of
 * memory could give a wrong line to the addresses after the cut. */
static void gather_lines(const struct module_info *module, struct opened_elf *file,
                         struct opened_elf *debug, size_t budget, int line_flags, int demangle,
                         struct gathered *g, struct file_probes *probes)
{
    int out_of_memory = 0;
    g->lines.with_inlines = (line_flags & LINE_INLINES) != 0;
    errno = 0;
    long rows = line_table_read(file->elf, budget, &g->lines);
    out_of_memory = rows == -ENOMEM || errno == ENOMEM;
    if (rows == 0 && !g->lines.skipped_lines && module->memory_image == NULL &&
        !out_of_memory && !(line_flags & LINE_OWN_TABLE_ONLY)) {
        if (debug->elf == NULL) {
            errno = 0;
            debug->elf = debug_file_open(file->elf, module->file_path, module->build_id,
                                         module->build_id_length, &debug->fd, probes);
            out_of_memory = debug->elf == NULL && errno == ENOMEM;
        }
        if (debug->elf != NULL) {
            errno = 0;
            rows = line_table_read(debug->elf, budget, &g->lines);
            out_of_memory = rows == -ENOMEM || errno == ENOMEM;
        }
    }
    if (out_of_memory) {
        g->out_of_memory = 1;
        line_vector_free(&g->lines);
        return;
    }
    g->lines_truncated = rows == -E2BIG;
    if (line_table_finish(&g->lines) < 0)
        g->out_of_memory = 1; /* the lines stay; no inlined calls */
    else if (demangle && demangled_inline_names(&g->lines, budget) < 0)
        g->out_of_memory = 1; /* the names not done stay mangled */
}

const struct module_data *module_data_build(const struct module_info *module,
                                            size_t line_budget, size_t *line_bytes)
{
    return module_data_build_recorded(module, line_budget, LINE_INLINES, line_bytes, NULL, 1);
}

const struct module_data *module_data_build_recorded(const struct module_info *module,
                                                     size_t line_budget, int line_flags,
                                                     size_t *line_bytes,
                                                     struct file_probes *probes, int demangle)
{
    return module_data_build_filtered(module, line_budget, line_flags, line_bytes, probes,
                                      demangle, NULL);
}

const struct module_data *module_data_build_filtered(const struct module_info *module,
                                                     size_t line_budget, int line_flags,
                                                     size_t *line_bytes,
                                                     struct file_probes *probes, int demangle,
                                                     struct answer_filter *filter)
{
    struct opened_elf file, debug = { NULL, -1 };
    struct gathered g;

    *line_bytes = 0;
    memset(&g, 0, sizeof g);
    g.symbols.filter = filter;
    g.lines.filter = filter;
    errno = 0;
    if (open_module(module, &file) < 0)
        return NULL; /* errno ENOMEM, or why the file is not used */
    gather_symbols(module, &file, &debug, &g, probes);
    if (demangle)
        gather_demangled(&g);
    if (line_budget > 0)
        gather_lines(module, &file, &debug, line_budget, line_flags, demangle, &g, probes);
    const struct module_data *data = pack(&g, demangle);
    if (data != NULL)
        *line_bytes = line_table_packed_size(&g.lines);
    symbol_vector_free(&g.symbols);
    demangled_names_free(&g.demangled);
    line_vector_free(&g.lines);
    opened_close(&debug);
    opened_close(&file);
    errno = data == NULL || g.out_of_memory ? ENOMEM : 0;
    return data;
}
