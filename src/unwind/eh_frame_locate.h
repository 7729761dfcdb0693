/* eh_frame_locate.h: .eh_frame found by section name, for a program
 * linked without .eh_frame_hdr (a fully static one). */
#ifndef EXECINFO_EX_EH_FRAME_LOCATE_H
#define EXECINFO_EX_EH_FRAME_LOCATE_H

#include <elf.h>
#include <stdint.h>

struct eh_frame_section {
    uintptr_t address;  /* link-time: add the program's load bias */
    uintptr_t size;
};

/* The running program's .eh_frame, from its section headers in
 * /proc/self/exe, read once and kept, if the file's ELF header is MAPPED
 * (the program's, as mapped). Returns 0, or -1 if it has none, is not
 * that file or cannot be read. Signal-safe. */
int eh_frame_locate_program(const Elf64_Ehdr *mapped, struct eh_frame_section *out);

#endif
