/* maps_reader.h: /proc/self/maps, one line at a time, from any context. */
#ifndef EXECINFO_EX_MAPS_READER_H
#define EXECINFO_EX_MAPS_READER_H

#include <stddef.h>
#include <stdint.h>

struct maps_entry {
    uintptr_t start, end, offset;
    int readable;
    int writable;
    int executable;
    int shared;         /* 's' rather than 'p' */
    const char *path;   /* "" for anonymous memory; valid during the callback */
};

/* Call VISIT for each mapping, in address order, until it returns nonzero.
 * Returns that value, 0 at the end, or -ENOENT if the file cannot be read.
 * Signal-safe (open, read, close into stack buffers; no malloc). */
int maps_for_each(int (*visit)(const struct maps_entry *entry, void *context), void *context);

/* The mapping that holds ADDRESS. Returns 0 or -ENOENT. Signal-safe. */
int maps_find(uintptr_t address, struct maps_entry *out);

#endif
