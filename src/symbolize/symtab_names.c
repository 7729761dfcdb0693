/* symtab_names.c: a cold module's names from its file (symtab_names.h).
 * World: signal-safe (openat, pread64 and close through syscall(); the
 * caller's scratch).
 *
 * One pass over the symbol table for all of a module's addresses, in
 * chunks of the caller's scratch: a program's .symtab may hold 100,000
 * symbols, and a report asks about a few dozen addresses. The symbols
 * kept are the index's (symbol_table.c): no undefined, absolute, TLS,
 * section or file symbols, none of a section the program never maps,
 * none whose name is empty or an ARM mapping symbol ('$x'); a sized
 * symbol contains its range, a sizeless one its own address only. */
#define _GNU_SOURCE
#include "symtab_names.h"
#include "../base/memory_read.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME_MAX_BYTES 1024

#define SECTIONS_MAX SYMTAB_SECTIONS_MAX

static int read_at(int fd, void *buffer, size_t size, uint64_t offset)
{
    long got = syscall(SYS_pread64, fd, buffer, size, (long)offset);
    return got == (long)size ? 0 : -1;
}

/* The file's ELF header is the one mapped at the module's start. */
static int is_the_mapped_file(int fd, const struct index_module *module, Elf64_Ehdr *file)
{
    Elf64_Ehdr mapped;
    return read_at(fd, file, sizeof *file, 0) == 0 &&
           memory_read(&mapped, module->start, sizeof mapped) == (ssize_t)sizeof mapped &&
           memcmp(file, &mapped, sizeof mapped) == 0 &&
           memcmp(file->e_ident, ELFMAG, SELFMAG) == 0 &&
           file->e_ident[EI_CLASS] == ELFCLASS64 && file->e_shentsize == sizeof(Elf64_Shdr) &&
           file->e_shnum <= SECTIONS_MAX;
}

/* .symtab, else .dynsym, with its string table; -1: neither. */
static int find_table(struct symtab_scratch *table, const Elf64_Ehdr *file)
{
    Elf64_Shdr section, found[2];
    int have[2] = { 0, 0 };
    memset(table->allocated, 0, sizeof table->allocated);
    for (unsigned i = 0; i < file->e_shnum; i++) {
        if (read_at(table->fd, &section, sizeof section, file->e_shoff + (uint64_t)i * sizeof section) < 0)
            return -1;
        if (section.sh_flags & SHF_ALLOC)
            table->allocated[i / 8] |= (unsigned char)(1u << (i % 8));
        int kind = section.sh_type == SHT_SYMTAB ? 0 : section.sh_type == SHT_DYNSYM ? 1 : -1;
        if (kind >= 0 && !have[kind] && section.sh_entsize == sizeof(Elf64_Sym)) {
            found[kind] = section;
            have[kind] = 1;
        }
    }
    int kind = have[0] ? 0 : have[1] ? 1 : -1;
    if (kind < 0 || found[kind].sh_link >= file->e_shnum)
        return -1;
    table->symbols = found[kind];
    return read_at(table->fd, &table->strings, sizeof table->strings,
                   file->e_shoff + (uint64_t)found[kind].sh_link * sizeof table->strings);
}

static int kept(const struct symtab_scratch *table, const Elf64_Sym *symbol)
{
    int type = ELF64_ST_TYPE(symbol->st_info);
    if (symbol->st_shndx == SHN_UNDEF || symbol->st_shndx == SHN_ABS || symbol->st_name == 0 ||
        type == STT_TLS || type == STT_SECTION || type == STT_FILE)
        return 0;
    if (symbol->st_shndx >= SHN_LORESERVE)
        return 1;
    return symbol->st_shndx < SECTIONS_MAX &&
           (table->allocated[symbol->st_shndx / 8] >> (symbol->st_shndx % 8) & 1);
}

static int contains(const Elf64_Sym *symbol, uint64_t address)
{
    if (symbol->st_size == 0)
        return address == symbol->st_value;
    return address - symbol->st_value < symbol->st_size;
}

/* An ARM mapping symbol ('$x', '$d': where code or data starts, no
 * function's name), looked at only for the few symbols that contain an
 * asked address. It shares its address with the function it starts, and
 * would otherwise hide it. */
static int is_mapping_symbol(const struct symtab_scratch *table, const Elf64_Sym *symbol)
{
    char first = '\0';
    if (ELF64_ST_TYPE(symbol->st_info) != STT_NOTYPE || symbol->st_name >= table->strings.sh_size)
        return 0;
    return read_at(table->fd, &first, 1, table->strings.sh_offset + symbol->st_name) == 0 &&
           first == '$';
}

/* The innermost symbol wins; between aliases, a global or weak one. */
static void consider(struct symtab_scratch *table, int a, const Elf64_Sym *symbol)
{
    int local = ELF64_ST_BIND(symbol->st_info) == STB_LOCAL;
    if (table->best[a].found &&
        (symbol->st_value < table->best[a].start ||
         (symbol->st_value == table->best[a].start && (local || !table->best[a].local))))
        return;
    table->best[a].start = symbol->st_value;
    table->best[a].name = symbol->st_name;
    table->best[a].local = local;
    table->best[a].found = 1;
}

static void scan(struct symtab_scratch *table, int count)
{
    size_t per_chunk = SYMTAB_CHUNK_BYTES / sizeof(Elf64_Sym);
    size_t total = table->symbols.sh_size / sizeof(Elf64_Sym);
    for (size_t first = 1; first < total; first += per_chunk) {
        size_t n = total - first < per_chunk ? total - first : per_chunk;
        if (read_at(table->fd, table->chunk, n * sizeof(Elf64_Sym),
                    table->symbols.sh_offset + first * sizeof(Elf64_Sym)) < 0)
            return;
        const Elf64_Sym *symbols = (const Elf64_Sym *)(void *)table->chunk;
        for (size_t i = 0; i < n; i++) {
            if (!kept(table, &symbols[i]))
                continue;
            for (int a = 0; a < count; a++)
                if (contains(&symbols[i], table->addresses[a]) &&
                    !is_mapping_symbol(table, &symbols[i]))
                    consider(table, a, &symbols[i]);
        }
    }
}

/* The name at OFFSET of the string table, into NAMES' buffer; NULL if it
 * is not there, is empty, is an ARM mapping symbol or holds a control
 * byte. */
static const char *copy_name(const struct symtab_scratch *table, uint32_t offset,
                             struct resolved_names *names)
{
    size_t room = sizeof names->answer - names->answer_length;
    size_t length = room < NAME_MAX_BYTES ? room : NAME_MAX_BYTES;
    if (offset >= table->strings.sh_size || length < 2)
        return NULL;
    if (length > table->strings.sh_size - offset)
        length = table->strings.sh_size - offset;
    char *name = names->answer + names->answer_length;
    long got = syscall(SYS_pread64, table->fd, name, length, (long)(table->strings.sh_offset + offset));
    if (got <= 0)
        return NULL;
    char *end = memchr(name, '\0', (size_t)got);
    if (end == NULL || end == name || name[0] == '$')
        return NULL;
    for (const char *at = name; at < end; at++)
        if ((unsigned char)*at < 0x20 || *at == 0x7f)
            return NULL;
    names->answer_length += (size_t)(end - name) + 1;
    return name;
}

static int add_found(struct resolved_names *names, const struct symtab_scratch *table,
                     const struct index_module *module, const uintptr_t *naming, int count)
{
    int named = 0;
    for (int a = 0; a < count && names->count < RESOLVED_FRAMES_MAX; a++) {
        const char *name =
            table->best[a].found ? copy_name(table, table->best[a].name, names) : NULL;
        if (name == NULL)
            continue;
        names->frames[names->count++] = (struct resolved_frame){
            .naming_address = naming[a], .function = name, .demangled = name,
            .function_address = module->bias + table->best[a].start,
            .inlined_first = (unsigned)names->inlined_count,
        };
        named++;
    }
    return named;
}

static int open_module(const struct index_module *module)
{
    const char *path = module->is_main ? "/proc/self/exe" : module->path;
    return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

int symtab_names_add(struct resolved_names *names, const struct index_module *module,
                     const uintptr_t *naming, int count, struct symtab_scratch *table)
{
    Elf64_Ehdr file;
    if (count > SYMTAB_ADDRESSES_MAX)
        count = SYMTAB_ADDRESSES_MAX;
    table->fd = open_module(module);
    if (table->fd < 0)
        return 0;
    int named = 0;
    if (is_the_mapped_file(table->fd, module, &file) && find_table(table, &file) == 0) {
        for (int a = 0; a < count; a++) {
            table->addresses[a] = naming[a] - module->bias;
            table->best[a].found = 0;
        }
        scan(table, count);
        named = add_found(names, table, module, naming, count);
    }
    close(table->fd);
    return named;
}
