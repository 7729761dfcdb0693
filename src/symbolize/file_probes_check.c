/* file_probes_check.c: check a record of debug files (file_probes.c)
 * against the file system: at load, and at the first use of an index
 * cache file whose load checked its header alone (index_cache_deferred.c),
 * which may be in the crash handler.
 * World: signal-safe (open, fstat, close; no malloc: the path is copied
 * to the stack to end it with a NUL).
 * The record's format is in file_probes.h. */
#define _GNU_SOURCE
#include "file_probes.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void file_probes_identity(const struct stat *file, uint64_t out[5])
{
    out[0] = (uint64_t)file->st_dev;
    out[1] = (uint64_t)file->st_ino;
    out[2] = (uint64_t)file->st_size;
    out[3] = (uint64_t)file->st_mtim.tv_sec;
    out[4] = (uint64_t)file->st_mtim.tv_nsec;
}

/* stat(PATH), following links as stat does, with the calls the signal-safe
 * world has (stat is async-signal-safe too, but not on its allowlist).
 * O_PATH opens what cannot be read. Returns 1 when PATH is there. */
static int stat_path(const char *path, struct stat *out)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int found = fstat(fd, out) == 0;
    close(fd);
    return found;
}

/* One string at *AT: its bytes and length, or -1 if it runs past SIZE. */
static int take_string(const unsigned char *bytes, size_t size, size_t *at, const char **text,
                       size_t *length)
{
    uint16_t stored;
    if (size - *at < sizeof stored)
        return -1;
    memcpy(&stored, bytes + *at, sizeof stored);
    *at += sizeof stored;
    if (size - *at < stored)
        return -1;
    *text = (const char *)bytes + *at;
    *length = stored;
    *at += stored;
    return 0;
}

/* Walk the records; with CHECK, also compare each with the file system.
 * Returns 1 when all are well formed (and, with CHECK, still hold) and
 * none is for the path FIND (NULL: none looked for). */
int file_probes_walk(const unsigned char *bytes, size_t size, int check, const char *find)
{
    size_t at = 0;
    while (at < size) {
        unsigned char kind = bytes[at++];
        const char *path;
        size_t path_length;
        uint64_t recorded[5], now[5];
        /* The path ends with its NUL, stored (no copy on a handler's
         * stack, which may be small) and none before it. */
        if (take_string(bytes, size, &at, &path, &path_length) < 0 || path_length < 2 ||
            path_length > PATH_MAX || path[path_length - 1] != '\0' ||
            memchr(path, '\0', path_length - 1) != NULL)
            return 0;
        if (kind != PROBE_ABSENT && kind != PROBE_FILE)
            return 0;
        if (kind == PROBE_FILE) {
            if (size - at < IDENTITY_BYTES)
                return 0;
            memcpy(recorded, bytes + at, sizeof recorded);
            at += IDENTITY_BYTES;
        }
        if (find != NULL && strcmp(find, path) == 0)
            return 0;
        if (!check)
            continue;
        struct stat file;
        int present = stat_path(path, &file) && S_ISREG(file.st_mode);
        if (present != (kind == PROBE_FILE))
            return 0;
        if (present) {
            file_probes_identity(&file, now);
            if (memcmp(now, recorded, sizeof now) != 0)
                return 0;
        }
    }
    return 1;
}

int file_probes_well_formed(const unsigned char *bytes, size_t size)
{
    return file_probes_walk(bytes, size, 0, NULL);
}

int file_probes_still_hold(const unsigned char *bytes, size_t size)
{
    return file_probes_walk(bytes, size, 1, NULL);
}
