/* symbol_table.c: read ELF symbol tables with libelf.
 * World: normal (libelf, malloc). */
#define _GNU_SOURCE /* memrchr */
#include "symbol_table.h"
#include "answer_filter.h"
#include "../base/array_grow.h"
#include "../base/run_sort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int push(struct symbol_vector *out, struct symbol_entry entry)
{
    if (array_grow(&out->entries, &out->capacity, out->count, sizeof *out->entries, 256) < 0)
        return -ENOMEM;
    out->entries[out->count++] = entry;
    return 0;
}

/* The symbols dladdr would consider, less those that name no code. */
static int is_useful(const GElf_Sym *symbol, const char *name)
{
    int type = GELF_ST_TYPE(symbol->st_info);

    if (symbol->st_shndx == SHN_UNDEF || symbol->st_shndx == SHN_ABS)
        return 0;
    if (type == STT_TLS || type == STT_SECTION || type == STT_FILE)
        return 0;
    /* '$x', '$d': ARM mapping symbols mark code and data, they name nothing. */
    return name != NULL && name[0] != '\0' && name[0] != '$';
}

/* Between aliases a local symbol loses to a global or weak one: GCC's
 * "fn.localalias" (and "fn.part.0"-style clones' aliases) sits at the
 * address of the real "fn", which is the name addr2line and gdb show. */
#define RANK_LOCAL (UINT32_C(1) << 30)

int symbol_vector_add(struct symbol_vector *out, const GElf_Sym *symbol, const char *name,
                      uint32_t rank)
{
    if (!is_useful(symbol, name))
        return 0;
    if (out->filter != NULL && !answer_filter_note(out->filter, symbol->st_value))
        return 0;
    if (GELF_ST_BIND(symbol->st_info) == STB_LOCAL)
        rank |= RANK_LOCAL;
    return push(out, (struct symbol_entry){ symbol->st_value, symbol->st_size, name, rank });
}

/* A symbol of a section the program never maps (the .gnu.warning.* of
 * glibc's link warnings, value 0) would cover whatever lies at its value:
 * libc's ELF header was named __evoke_link_warning_getwd. */
static int in_mapped_section(Elf *elf, const GElf_Sym *symbol)
{
    GElf_Shdr header;
    if (symbol->st_shndx == SHN_UNDEF || symbol->st_shndx >= SHN_LORESERVE)
        return 1; /* SHN_XINDEX and the like: not worth a lookup, kept */
    Elf_Scn *section = elf_getscn(elf, symbol->st_shndx);
    return section != NULL && gelf_getshdr(section, &header) != NULL &&
           (header.sh_flags & SHF_ALLOC);
}

/* The names of a table's symbols, read from its string table directly: a
 * name is whole if it starts before the table's last NUL, found once.
 * libelf's elf_strptr looks for a NUL from the table's end back to the
 * name at every call when the table does not end in one (elfutils 0.188):
 * count x size for a hostile table. A compressed string table (which no
 * linker writes) is left to elf_strptr. */
struct names {
    Elf *elf;
    size_t section;
    const char *text;     /* NULL: ask elf_strptr */
    size_t end;           /* offset of the last NUL */
};

static int names_open(Elf *elf, size_t section, struct symbol_vector *out, struct names *names)
{
    GElf_Shdr header;
    Elf_Scn *strings = elf_getscn(elf, section);
    *names = (struct names){ elf, section, NULL, 0 };
    if (strings == NULL || gelf_getshdr(strings, &header) == NULL)
        return -1;
    if ((header.sh_flags & SHF_COMPRESSED) != 0)
        return 0;
    Elf_Data *data = elf_getdata(strings, NULL);
    if (data == NULL || data->d_buf == NULL || data->d_size == 0)
        return -1;
    const char *last_nul = memrchr(data->d_buf, '\0', data->d_size);
    out->name_bytes_read += last_nul ? data->d_size - (size_t)(last_nul - (const char *)data->d_buf)
                                     : data->d_size;
    if (last_nul == NULL)
        return -1;
    names->text = data->d_buf;
    names->end = (size_t)(last_nul - names->text);
    return 0;
}

static const char *name_at(const struct names *names, size_t offset)
{
    if (names->text == NULL)
        return elf_strptr(names->elf, names->section, offset);
    return offset <= names->end ? names->text + offset : NULL;
}

static int read_section(Elf *elf, Elf_Scn *section, const GElf_Shdr *header,
                        uint32_t rank_base, struct symbol_vector *out)
{
    Elf_Data *data = elf_getdata(section, NULL);
    struct names names;
    if (data == NULL || header->sh_entsize == 0 || names_open(elf, header->sh_link, out, &names) < 0)
        return 0;
    size_t count = data->d_size / header->sh_entsize;
    for (size_t i = 1; i < count; i++) {
        GElf_Sym symbol;
        if (gelf_getsym(data, (int)i, &symbol) == NULL)
            continue;
        if (out->filter != NULL && !answer_filter_may_keep(out->filter, symbol.st_value))
            continue; /* needed by no address: not worth its section's lookup */
        if (!in_mapped_section(elf, &symbol))
            continue;
        const char *name = name_at(&names, symbol.st_name);
        if (symbol_vector_add(out, &symbol, name, rank_base + (uint32_t)i) < 0)
            return -ENOMEM;
    }
    return 0;
}

int symbol_table_read(Elf *elf, unsigned table_type, struct symbol_vector *out)
{
    uint32_t rank_base = table_type == SHT_DYNSYM ? 0 : UINT32_C(1) << 31;
    Elf_Scn *section = NULL;
    int found = 0;

    while ((section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == NULL || header.sh_type != table_type)
            continue;
        if (header.sh_type == SHT_SYMTAB || header.sh_type == SHT_DYNSYM) {
            if (read_section(elf, section, &header, rank_base, out) < 0)
                return -ENOMEM;
            found = 1;
        }
    }
    return found;
}

static int by_start_then_rank(const void *a, const void *b)
{
    const struct symbol_entry *left = a, *right = b;
    if (left->start != right->start)
        return left->start < right->start ? -1 : 1;
    /* A sized alias can contain an address, an unsized one only match it. */
    if ((left->size == 0) != (right->size == 0))
        return left->size == 0 ? 1 : -1;
    return left->rank < right->rank ? -1 : left->rank > right->rank;
}

static void reverse(struct symbol_entry *first, struct symbol_entry *last)
{
    for (; first < last; first++, last--) {
        struct symbol_entry swap = *first;
        *first = *last;
        *last = swap;
    }
}

/* Of the aliases at one address, the first one sorted is the one glibc
 * names; a longer alias is kept too (glibc's dladdr takes any symbol whose
 * range holds the address: _sys_errlist has a short and a long version),
 * and the run is reversed, so that the lookup, which searches backwards,
 * tries the preferred name first and a longer one only past its end. */
void symbol_table_finish(struct symbol_vector *symbols)
{
    size_t kept = 0, run = 0;

    run_sort(symbols->entries, symbols->count, sizeof *symbols->entries, by_start_then_rank);
    for (size_t i = 0; i < symbols->count; i++) {
        const struct symbol_entry *entry = &symbols->entries[i];
        if (kept > 0 && symbols->entries[kept - 1].start == entry->start) {
            if (entry->size > symbols->entries[kept - 1].size && symbols->entries[kept - 1].size > 0)
                symbols->entries[kept++] = *entry;
            continue;
        }
        reverse(&symbols->entries[run], &symbols->entries[kept - (kept > 0)]);
        run = kept;
        symbols->entries[kept++] = *entry;
    }
    if (kept > 0)
        reverse(&symbols->entries[run], &symbols->entries[kept - 1]);
    symbols->count = kept;
}

void symbol_vector_free(struct symbol_vector *symbols)
{
    free(symbols->entries);
    memset(symbols, 0, sizeof *symbols);
}
