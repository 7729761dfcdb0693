/* minidump_file_id.h: Breakpad's identifier of an ELF file that has no
 * build-id (common/linux/file_id.cc, HashElfTextSection).
 * World: signal-safe. */
#ifndef EXECINFO_EX_MINIDUMP_FILE_ID_H
#define EXECINFO_EX_MINIDUMP_FILE_ID_H

#include <stdint.h>

#include "minidump_format.h"

#define MINIDUMP_FILE_ID_SCRATCH (4096 + MD_GUID_SIZE)

/* The 16 bytes of the file at PATH's fallback identifier: its .text
 * section's first page (at most 4096 bytes, read in 16-byte blocks, the
 * last one whole) XORed together, 16 bytes at a time. Read from the file,
 * as Breakpad does, into SCRATCH (MINIDUMP_FILE_ID_SCRATCH bytes: a
 * handler's stack is small). Returns 0, or -errno (-ENOENT: no .text). */
int minidump_file_id_from_text(const char *path, uint8_t id[MD_GUID_SIZE], uint8_t *scratch);

#endif
