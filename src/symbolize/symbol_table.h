/* symbol_table.h: function names from an ELF file's symbol tables. */
#ifndef EXECINFO_EX_SYMBOL_TABLE_H
#define EXECINFO_EX_SYMBOL_TABLE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct answer_filter;

struct symbol_entry {
    uint64_t start;       /* link-time address (st_value) */
    uint64_t size;        /* 0: matches only its exact address, as in glibc */
    const char *name;     /* points into the Elf's data: pack before elf_end */
    uint32_t rank;        /* lower wins between aliases at one address */
};

struct symbol_vector {
    struct symbol_entry *entries;
    size_t count, capacity;
    uint64_t name_bytes_read;   /* of string tables, scanned for names' ends */
    /* Set before reading: only the symbols that an answer about its
     * addresses needs are kept (answer_filter.h); NULL: all. */
    struct answer_filter *filter;
};

/* Append the defined symbols of the tables of TYPE (SHT_DYNSYM or
 * SHT_SYMTAB) in ELF. Ranks follow the order of the table, dynsym first,
 * so that an alias is chosen as glibc's dladdr chooses it. Returns 1 if the
 * table exists, 0 if not, -ENOMEM. Normal world. */
int symbol_table_read(Elf *elf, unsigned table_type, struct symbol_vector *out);

/* The same from the dynamic section, for a file without section headers
 * (src/symbolize/dynamic_symbols.c). Returns 1 if the table was found, 0
 * if not, -ENOMEM. Normal world. */
int dynamic_symbols_read(Elf *elf, struct symbol_vector *out);

/* Append SYMBOL, named NAME, with RANK (a local symbol ranks after every
 * global or weak one of its table, so an alias the compiler made loses to
 * the real name), if it names code or data (not an undefined, absolute,
 * TLS, section or file symbol, nor an ARM mapping symbol). Returns 0 or
 * -ENOMEM. RANK must be below 2^30 within a table. */
int symbol_vector_add(struct symbol_vector *out, const GElf_Sym *symbol, const char *name,
                      uint32_t rank);

/* Sort by address and keep one symbol per address. Normal world. */
void symbol_table_finish(struct symbol_vector *symbols);

void symbol_vector_free(struct symbol_vector *symbols);

#endif
