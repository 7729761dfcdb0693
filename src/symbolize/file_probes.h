/* file_probes.h: the files a module's index data was read from, besides
 * the module itself, so that a cached copy can be checked against them. */
#ifndef EXECINFO_EX_FILE_PROBES_H
#define EXECINFO_EX_FILE_PROBES_H

#include <stddef.h>
#include <sys/stat.h>

/* Every path the debug file search looked at, and what it found there:
 * nothing, or a regular file of this identity (taken or refused), and the
 * realpath of a module whose .gnu_debuglink was followed. Serialized
 * records in one malloc'd buffer; FAILED when memory ran out (then the
 * record is incomplete and must not be used). */
struct file_probes {
    unsigned char *bytes;
    size_t size, capacity;
    int failed;
};

/* PATH was looked at: FOUND is the file's identity, or NULL (absent, not a
 * regular file, unreadable). PROBES may be NULL. Normal world. */
void file_probes_add_file(struct file_probes *probes, const char *path, const struct stat *found);
/* realpath(PATH) gave RESULT (NULL: failed). */
void file_probes_add_realpath(struct file_probes *probes, const char *path, const char *result);
void file_probes_free(struct file_probes *probes);

/* Whether BYTES (SIZE, untrusted) is a well-formed record list. */
int file_probes_well_formed(const unsigned char *bytes, size_t size);
/* Whether a well-formed record list still describes the file system: each
 * path absent or the same file, each realpath the same. Normal world. */
int file_probes_still_hold(const unsigned char *bytes, size_t size);

#endif
