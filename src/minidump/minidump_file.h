/* minidump_file.h: the minidump's bytes, laid out as Breakpad's writer
 * lays them: space is taken at the end (8-byte aligned) and filled by
 * position, so that a stream's header may be written after its parts.
 * World: signal-safe. */
#ifndef EXECINFO_EX_MINIDUMP_FILE_H
#define EXECINFO_EX_MINIDUMP_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "minidump_format.h"

struct minidump_file {
    int fd;
    uint64_t end;        /* the bytes taken so far */
    int error;           /* the first write error (-errno), 0: none */
    char *scratch;       /* a buffer for copies (memory, files, strings) */
    size_t scratch_size;
};

void minidump_file_init(struct minidump_file *file, int fd, char *scratch, size_t scratch_size);

/* Take SIZE bytes at the end: *RVA is where. Returns 0, or -EFBIG past
 * the format's 4 GiB. */
int minidump_file_take(struct minidump_file *file, size_t size, uint32_t *rva);

/* Write SIZE bytes of DATA at RVA. Returns 0 or -errno (kept in error). */
int minidump_file_write(struct minidump_file *file, uint32_t rva, const void *data, size_t size);

/* Take and write: WHERE receives the location. Returns 0 or -errno. */
int minidump_file_append(struct minidump_file *file, const void *data, size_t size,
                         struct md_location *where);

/* An MDString (length in bytes, UTF-16LE, a NUL after) from LENGTH bytes
 * of UTF-8 TEXT. Returns 0 or -errno. */
int minidump_file_append_string(struct minidump_file *file, const char *text, size_t length,
                                struct md_location *where);

/* SIZE bytes of this process's memory from ADDRESS, read without faulting
 * (process_vm_readv): bytes that cannot be read are written as zeros.
 * Returns 0, -EFAULT if none could be read (nothing taken), or -errno. */
int minidump_file_append_memory(struct minidump_file *file, uintptr_t address, size_t size,
                                struct md_location *where);

/* The whole content of the file at PATH (a /proc file: its size is not
 * known before it is read). Returns 0 or -errno. */
int minidump_file_append_path(struct minidump_file *file, const char *path,
                              struct md_location *where);

/* Read this process's memory without faulting. Returns 0 if all SIZE
 * bytes were read, else -EFAULT. */
int minidump_read_memory(void *out, uintptr_t address, size_t size);

/* Cut the file to the bytes taken. Returns 0 or -errno. */
int minidump_file_finish(struct minidump_file *file);

#endif
