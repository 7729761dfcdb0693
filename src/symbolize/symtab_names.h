/* symtab_names.h: names for a module the index has not read (a cold
 * cache), from its own file's .symtab, else its .dynsym, read in the crash
 * handler with pread: no libelf, which allocates. */
#ifndef EXECINFO_EX_SYMTAB_NAMES_H
#define EXECINFO_EX_SYMTAB_NAMES_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "resolved_names.h"

/* Scratch for the reads, the caller's (one per report: a crash and a
 * dump may be written at once; an alternate stack is too small). */
#define SYMTAB_CHUNK_BYTES (64 * 1024)
#define SYMTAB_ADDRESSES_MAX 256
#define SYMTAB_SECTIONS_MAX 4096
struct symtab_scratch {
    char chunk[SYMTAB_CHUNK_BYTES];
    int fd;
    Elf64_Shdr symbols, strings;
    unsigned char allocated[SYMTAB_SECTIONS_MAX / 8]; /* SHF_ALLOC, by section index */
    struct {
        uint64_t start;
        uint32_t name;
        int local, found;
    } best[SYMTAB_ADDRESSES_MAX];
    uint64_t addresses[SYMTAB_ADDRESSES_MAX];  /* link-time */
};

/* Name each of the COUNT naming addresses NAMING (runtime, in MODULE)
 * that a symbol of MODULE's file contains (the same symbols the index
 * keeps, a global alias before a local one), adding a frame with its name
 * (not demangled) and no line to NAMES, the name's bytes in NAMES' answer
 * buffer. The file is /proc/self/exe for the program, else the module's
 * path, and must have the ELF header that is mapped. Returns how many
 * were named (at most SYMTAB_ADDRESSES_MAX are looked at). Signal-safe
 * (open, pread, close). */
int symtab_names_add(struct resolved_names *names, const struct index_module *module,
                     const uintptr_t *naming, int count, struct symtab_scratch *scratch);

#endif
