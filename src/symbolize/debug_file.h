/* debug_file.h: find the separate debug file of a stripped module. */
#ifndef EXECINFO_EX_DEBUG_FILE_H
#define EXECINFO_EX_DEBUG_FILE_H

#include <gelf.h>
#include <stddef.h>

/* Open the debug file of ELF (whose path is PATH and build-id BUILD_ID):
 * first ROOT/.build-id/xx/yyyy.debug under each debug root in turn, then
 * .gnu_debuglink in the module's directory, its .debug/ and ROOT/<dir>/
 * under each root. A file
 * whose build-id differs from BUILD_ID is not taken. Returns an Elf opened
 * with ELF_C_READ and its fd in *FD, or NULL (with errno ENOMEM when
 * memory ran out: no later candidate is tried). Every path looked at is
 * recorded in PROBES (may be NULL). Normal world. */
struct file_probes;
Elf *debug_file_open(Elf *elf, const char *path, const unsigned char *build_id,
                     unsigned build_id_length, int *fd, struct file_probes *probes);

/* Open PATH for reading if it is a regular file, without blocking on a
 * FIFO or a device (a trace or a mapping may name either). Returns the fd
 * or -1 with errno set (ENOENT... or EINVAL: not a regular file). */
int elf_file_open(const char *path);

/* The build-id of an ELF file, from its notes. Returns the length or 0. */
unsigned elf_file_build_id(Elf *elf, unsigned char *id, size_t capacity);

/* debug_file_roots: debug_roots.h. */
#include "debug_roots.h"

#endif
