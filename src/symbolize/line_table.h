/* line_table.h: source lines of a module, from its DWARF line tables. */
#ifndef EXECINFO_EX_LINE_TABLE_H
#define EXECINFO_EX_LINE_TABLE_H

#include <gelf.h>
#include <stddef.h>

#include "inline_table.h"
#include <stdint.h>

struct answer_filter;

struct line_entry {
    uint64_t address;   /* link-time address where the row starts */
    uint32_t file;      /* index into line_vector.files */
    uint32_t line;      /* 0: end of a sequence, no line from here */
    uint32_t order;     /* position in the DWARF, so that sorting is stable */
};

struct line_vector {
    struct line_entry *entries;
    size_t count, capacity;
    char **files;       /* distinct file names (and inlined functions' names), owned */
    size_t file_count, file_capacity;
    int with_inlines;   /* set before reading: read the inlined calls too */
    /* Set before reading: only the units that hold its addresses
     * (answer_filter.h); NULL: all. */
    const struct answer_filter *filter;
    int skipped_lines;  /* a unit with a line table was left out by the filter */
    struct inline_vector inlines;
};

/* Append the rows of every compilation unit of ELF (and its inlined
 * calls, with OUT->with_inlines), stopping (and returning -E2BIG, the
 * whole units read so far kept) once they would take more than BUDGET
 * bytes. Returns the number of rows, 0 without DWARF, -ENOMEM.
 * Normal world (libdw). */
long line_table_read(Elf *elf, size_t budget, struct line_vector *out);

/* Sort by address, one row per address; the inlined calls' ranges made
 * segments. Returns 0, or -ENOMEM (then no inlined calls). Normal world. */
int line_table_finish(struct line_vector *lines);

/* Bytes the finished table will take once packed into the index. */
size_t line_table_packed_size(const struct line_vector *lines);

void line_vector_free(struct line_vector *lines);

#endif
