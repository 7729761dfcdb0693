/* dynamic_symbols.c: the dynamic symbol table of a file that has no
 * section headers (sstrip'd, or packed), found as the dynamic linker finds
 * it: PT_DYNAMIC gives DT_SYMTAB, DT_STRTAB and DT_STRSZ, and the symbol
 * count comes from DT_HASH, or from the chains of DT_GNU_HASH. glibc's
 * dladdr names exported functions of such a file; so do we.
 * World: normal (libelf, malloc).
 *
 * Every address and count comes from the file, so each is checked against
 * the loaded segments and the file before it is used. */
#define _GNU_SOURCE /* memrchr */
#include "symbol_table.h"

#include <errno.h>
#include <string.h>

#define SYMBOLS_MAX (1u << 24)  /* a count beyond this is a damaged table */
#define CHAIN_MAX 65536          /* symbols of one hash chain, at most */

struct dynamic_tables {
    uint64_t symbols, strings, string_size, entry_size, hash, gnu_hash;
};

/* The file offset of link-time address ADDRESS holding LENGTH bytes, or
 * -1 if no PT_LOAD holds them in the file. */
static int64_t file_offset(Elf *elf, size_t headers, uint64_t address, uint64_t length)
{
    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)i, &header) == NULL || header.p_type != PT_LOAD)
            continue;
        if (address >= header.p_vaddr && address - header.p_vaddr <= header.p_filesz &&
            length <= header.p_filesz - (address - header.p_vaddr))
            return (int64_t)(header.p_offset + (address - header.p_vaddr));
    }
    return -1;
}

/* The bytes of the PT_LOAD holding ADDRESS from it to the segment's end
 * in the file, 0 if none holds it. */
static uint64_t segment_bytes_from(Elf *elf, size_t headers, uint64_t address)
{
    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)i, &header) == NULL || header.p_type != PT_LOAD)
            continue;
        if (address >= header.p_vaddr && address - header.p_vaddr < header.p_filesz)
            return header.p_filesz - (address - header.p_vaddr);
    }
    return 0;
}

static int read_dynamic(Elf *elf, size_t headers, struct dynamic_tables *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)i, &header) == NULL || header.p_type != PT_DYNAMIC)
            continue;
        Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)header.p_offset, header.p_filesz,
                                              ELF_T_DYN);
        if (data == NULL)
            return -1;
        size_t count = data->d_size / gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
        for (size_t j = 0; j < count; j++) {
            GElf_Dyn entry;
            if (gelf_getdyn(data, (int)j, &entry) == NULL || entry.d_tag == DT_NULL)
                break;
            uint64_t value = entry.d_un.d_ptr;
            switch (entry.d_tag) {
            case DT_SYMTAB: out->symbols = value; break;
            case DT_STRTAB: out->strings = value; break;
            case DT_STRSZ: out->string_size = value; break;
            case DT_SYMENT: out->entry_size = value; break;
            case DT_HASH: out->hash = value; break;
            case DT_GNU_HASH: out->gnu_hash = value; break;
            }
        }
        return out->symbols && out->strings && out->string_size ? 0 : -1;
    }
    return -1;
}

static const uint32_t *words_at(Elf *elf, size_t headers, uint64_t address, uint64_t count)
{
    if (count > SYMBOLS_MAX * 2ull)
        return NULL;
    int64_t offset = file_offset(elf, headers, address, count * 4);
    if (offset < 0)
        return NULL;
    Elf_Data *data = elf_getdata_rawchunk(elf, offset, count * 4, ELF_T_WORD);
    return data != NULL && data->d_size == count * 4 ? data->d_buf : NULL;
}

/* DT_HASH: nchain, its second word, is the number of symbols. */
static uint64_t count_from_hash(Elf *elf, size_t headers, uint64_t address)
{
    const uint32_t *words = words_at(elf, headers, address, 2);
    return words != NULL ? words[1] : 0;
}

/* DT_GNU_HASH: one past the highest symbol any chain reaches. */
static uint64_t count_from_gnu_hash(Elf *elf, size_t headers, uint64_t address, int class64)
{
    const uint32_t *head = words_at(elf, headers, address, 4);
    if (head == NULL)
        return 0;
    uint64_t buckets = head[0], first = head[1], bloom_words = head[2] * (class64 ? 2ull : 1ull);
    uint64_t bucket_start = address + 16 + bloom_words * 4;
    const uint32_t *bucket = words_at(elf, headers, bucket_start, buckets);
    if (bucket == NULL || buckets == 0)
        return 0;
    uint64_t last = 0;
    for (uint64_t i = 0; i < buckets; i++)
        if (bucket[i] > last)
            last = bucket[i];
    if (last < first)
        return first;
    /* Walk the last chain to its end (the low bit marks it), read as one
     * chunk of at most CHAIN_MAX words. */
    uint64_t chain = bucket_start + buckets * 4 + (last - first) * 4;
    uint64_t available = segment_bytes_from(elf, headers, chain) / 4;
    const uint32_t *words = words_at(elf, headers, chain, available < CHAIN_MAX ? available : CHAIN_MAX);
    for (uint64_t i = 0; words != NULL && i < available && i < CHAIN_MAX; i++)
        if (words[i] & 1)
            return last + i + 1;
    return 0;
}

int dynamic_symbols_read(Elf *elf, struct symbol_vector *out)
{
    size_t headers;
    struct dynamic_tables tables;
    GElf_Ehdr file;

    if (gelf_getehdr(elf, &file) == NULL || elf_getphdrnum(elf, &headers) != 0 ||
        read_dynamic(elf, headers, &tables) < 0)
        return 0;
    int class64 = file.e_ident[EI_CLASS] == ELFCLASS64;
    size_t entry_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    if (tables.entry_size != 0 && tables.entry_size != entry_size)
        return 0;
    uint64_t count = tables.hash       ? count_from_hash(elf, headers, tables.hash)
                     : tables.gnu_hash ? count_from_gnu_hash(elf, headers, tables.gnu_hash, class64)
                                       : 0;
    int64_t strings_at = file_offset(elf, headers, tables.strings, tables.string_size);
    int64_t symbols_at = file_offset(elf, headers, tables.symbols, count * entry_size);
    if (count < 2 || count > SYMBOLS_MAX || strings_at < 0 || symbols_at < 0)
        return 0;
    Elf_Data *strings = elf_getdata_rawchunk(elf, strings_at, tables.string_size, ELF_T_BYTE);
    Elf_Data *symbols = elf_getdata_rawchunk(elf, symbols_at, count * entry_size, ELF_T_SYM);
    if (strings == NULL || symbols == NULL || strings->d_size == 0)
        return 0;
    /* A name is whole if it starts before the table's last NUL: one scan
     * of the table, not one per symbol (a table without NUL and many
     * symbols would make that quadratic). */
    const char *text = strings->d_buf;
    const char *last_nul = memrchr(text, '\0', strings->d_size);
    out->name_bytes_read += last_nul ? strings->d_size - (size_t)(last_nul - text) : strings->d_size;
    if (last_nul == NULL)
        return 0;
    size_t names_end = (size_t)(last_nul - text);
    for (uint64_t i = 1; i < count; i++) {
        GElf_Sym symbol;
        if (gelf_getsym(symbols, (int)i, &symbol) == NULL || symbol.st_name > names_end)
            continue;
        if (symbol_vector_add(out, &symbol, text + symbol.st_name, (uint32_t)i) < 0)
            return -ENOMEM;
    }
    return 1;
}
