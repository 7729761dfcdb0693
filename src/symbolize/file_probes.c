/* file_probes.c: record the debug files a module's data depends on
 * (src/symbolize/index_cache.c); file_probes_check.c checks the record
 * again later.
 * World: normal (malloc). The record's format is in file_probes.h. */
#define _GNU_SOURCE
#include "file_probes.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


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
    size_t length = strlen(text) + 1; /* with its NUL: checked in place, no copy */
    if (length > UINT16_MAX) {
        probes->failed = 1;
        return;
    }
    uint16_t stored = (uint16_t)length;
    append(probes, &stored, sizeof stored);
    append(probes, text, length);
}

void file_probes_add_file(struct file_probes *probes, const char *path, const struct stat *found)
{
    /* The symbols' search and the lines' may both look (the same answer). */
    if (probes == NULL || probes->failed || !file_probes_walk(probes->bytes, probes->size, 0, path))
        return;
    unsigned char kind = found != NULL ? PROBE_FILE : PROBE_ABSENT;
    append(probes, &kind, 1);
    append_string(probes, path);
    if (found != NULL) {
        uint64_t identity[5];
        file_probes_identity(found, identity);
        append(probes, identity, sizeof identity);
    }
}

void file_probes_free(struct file_probes *probes)
{
    free(probes->bytes);
    memset(probes, 0, sizeof *probes);
}
