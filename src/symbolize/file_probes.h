/* file_probes.h: the files a module's index data was read from, besides
 * the module itself, so that a cached copy can be checked against them. */
#ifndef EXECINFO_EX_FILE_PROBES_H
#define EXECINFO_EX_FILE_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Every path the debug file search looked at, and what it found there:
 * nothing, or a regular file of this identity (taken or refused).
 * Serialized records in one malloc'd buffer, each path once; FAILED when
 * memory ran out (then the record is incomplete and must not be used).
 * The candidates depend on the module's build-id, its .gnu_debuglink (the
 * module file's identity is in the cache key), the realpath of its
 * directory (its path is in the key: a symlink along it that changes
 * while the file stays is not seen) and the debug roots (which give
 * other paths: they are in the cache key, debug_file.h). */
/* A record is: kind (1 byte), path length (2 bytes), the path with its
 * NUL (counted in the length), then for a
 * file found its identity (device, inode, size, mtime seconds and
 * nanoseconds: 5 x 8 bytes). */
enum { PROBE_ABSENT = 1, PROBE_FILE = 2 };
#define IDENTITY_BYTES (5 * 8)

struct file_probes {
    unsigned char *bytes;
    size_t size, capacity;
    int failed;
};

/* PATH was looked at: FOUND is the file's identity, or NULL (absent, not a
 * regular file, unreadable); a path already recorded is not recorded
 * again. PROBES may be NULL. Normal world. */
void file_probes_add_file(struct file_probes *probes, const char *path, const struct stat *found);
void file_probes_free(struct file_probes *probes);

/* Walk the records of BYTES (SIZE, untrusted); with CHECK, also compare
 * each with the file system. Returns 1 when all are well formed (and,
 * with CHECK, still hold) and none is for the path FIND (NULL: none looked
 * for). Signal-safe, as the two below (file_probes_check.c). */
int file_probes_walk(const unsigned char *bytes, size_t size, int check, const char *find);
/* A file's identity as a record keeps it. */
void file_probes_identity(const struct stat *file, uint64_t out[5]);

/* Whether BYTES (SIZE, untrusted) is a well-formed record list. */
int file_probes_well_formed(const unsigned char *bytes, size_t size);
/* Whether a well-formed record list still describes the file system: each
 * path absent or the same file. Signal-safe. */
int file_probes_still_hold(const unsigned char *bytes, size_t size);

#endif
