/* elf_library_entry.h: the assembly of elf_libraries.c's jump table, one
 * header per architecture: ELF_LIBRARY_ENTRY(index, name), a hidden NAME
 * that jumps through elf_library_slots[INDEX], and elf_library_resolve_INDEX
 * that passes INDEX to elf_library_resolve; ELF_LIBRARY_RESOLVER, which
 * saves the argument registers, calls elf_libraries_load, restores them
 * and jumps through the slot, and elf_library_unavailable, which returns
 * 0. */
#ifndef EXECINFO_EX_ELF_LIBRARY_ENTRY_H
#define EXECINFO_EX_ELF_LIBRARY_ENTRY_H

#if defined(__x86_64__)
#include "elf_library_entry_x86_64.h"
#elif defined(__aarch64__)
#include "elf_library_entry_aarch64.h"
#else
#error "src/symbolize: x86_64 and aarch64 only; add elf_library_entry_ARCH.h"
#endif

#endif
