/* file_probes.c: record the debug files a module's data depends on, and
 * check the record again later (src/symbolize/index_cache.c).
 * World: normal (malloc, stat, realpath).
 *
 * A record is: kind (1 byte), path length (2 bytes), the path, then for a
 * file found its identity (device, inode, size, mtime seconds and
 * nanoseconds: 5 x 8 bytes). */
#define _GNU_SOURCE
#include "file_probes.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PROBE_ABSENT = 1, PROBE_FILE = 2 };
#define IDENTITY_BYTES (5 * 8)

static void append(struct file_probes *probes, const void *bytes, size_t size)
{
    if (probes->failed)
        return;
    if (probes->size + size > probes->capacity) {
        size_t capacity = probes->capacity ? probes->capacity : 256;
        while (probes->size + size > capacity)
            capacity *= 2;
        unsigned char *grown = realloc(probes->bytes, capacity);
        if (grown == NULL) {
            probes->failed = 1;
            return;
        }
        probes->bytes = grown;
        probes->capacity = capacity;
    }
    memcpy(probes->bytes + probes->size, bytes, size);
    probes->size += size;
}

static void append_string(struct file_probes *probes, const char *text)
{
    size_t length = strlen(text);
    if (length > UINT16_MAX) {
        probes->failed = 1;
        return;
    }
    uint16_t stored = (uint16_t)length;
    append(probes, &stored, sizeof stored);
    append(probes, text, length);
}

static void identity_of(const struct stat *file, uint64_t out[5])
{
    out[0] = (uint64_t)file->st_dev;
    out[1] = (uint64_t)file->st_ino;
    out[2] = (uint64_t)file->st_size;
    out[3] = (uint64_t)file->st_mtim.tv_sec;
    out[4] = (uint64_t)file->st_mtim.tv_nsec;
}

static int walk(const unsigned char *bytes, size_t size, int check, const char *find);

void file_probes_add_file(struct file_probes *probes, const char *path, const struct stat *found)
{
    /* The symbols' search and the lines' may both look (the same answer). */
    if (probes == NULL || probes->failed || !walk(probes->bytes, probes->size, 0, path))
        return;
    unsigned char kind = found != NULL ? PROBE_FILE : PROBE_ABSENT;
    append(probes, &kind, 1);
    append_string(probes, path);
    if (found != NULL) {
        uint64_t identity[5];
        identity_of(found, identity);
        append(probes, identity, sizeof identity);
    }
}

void file_probes_free(struct file_probes *probes)
{
    free(probes->bytes);
    memset(probes, 0, sizeof *probes);
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
static int walk(const unsigned char *bytes, size_t size, int check, const char *find)
{
    size_t at = 0;
    while (at < size) {
        unsigned char kind = bytes[at++];
        const char *path;
        size_t path_length;
        char copy[PATH_MAX];
        uint64_t recorded[5], now[5];
        if (take_string(bytes, size, &at, &path, &path_length) < 0 || path_length == 0 ||
            path_length >= sizeof copy || memchr(path, '\0', path_length) != NULL)
            return 0;
        if (kind != PROBE_ABSENT && kind != PROBE_FILE)
            return 0;
        if (kind == PROBE_FILE) {
            if (size - at < IDENTITY_BYTES)
                return 0;
            memcpy(recorded, bytes + at, sizeof recorded);
            at += IDENTITY_BYTES;
        }
        if (find != NULL && strlen(find) == path_length && memcmp(find, path, path_length) == 0)
            return 0;
        if (!check)
            continue;
        memcpy(copy, path, path_length);
        copy[path_length] = '\0';
        struct stat file;
        int present = stat(copy, &file) == 0 && S_ISREG(file.st_mode);
        if (present != (kind == PROBE_FILE))
            return 0;
        if (present) {
            identity_of(&file, now);
            if (memcmp(now, recorded, sizeof now) != 0)
                return 0;
        }
    }
    return 1;
}

int file_probes_well_formed(const unsigned char *bytes, size_t size)
{
    return walk(bytes, size, 0, NULL);
}

int file_probes_still_hold(const unsigned char *bytes, size_t size)
{
    return walk(bytes, size, 1, NULL);
}
