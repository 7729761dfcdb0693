/* index_cache_deferred.h: an index cache file whose header was checked at
 * load, mapped and checked whole when a reader first needs its module
 * (issue 26: the mapping and the checksum were most of a warm load's
 * cost, for a crash that almost never comes). */
#ifndef EXECINFO_EX_INDEX_CACHE_DEFERRED_H
#define EXECINFO_EX_INDEX_CACHE_DEFERRED_H

#include <stdatomic.h>
#include <stdint.h>

#include "index.h"
#include "index_cache_format.h"

struct index_cache_deferred {
    char name[2 * MODULE_BUILD_ID_MAX + 32];  /* in the cache directory */
    struct cache_fit fit;      /* what its header must say */
    unsigned euid;             /* its owner */
    _Atomic(const struct module_data *) data;  /* mapped and checked; NULL: not yet */
    atomic_int refused;        /* gone, changed since the load, damaged: no names */
    int check_whole;           /* not stamped as a whole-lines file (its lines cut by
                                  the budget, its stamp lost to a copy): checked whole
                                  at its first use, as a load checks it */
};

/* The cache directory, checked to be ours by index_cache_prepare: a
 * first use opens the file in it if the descriptor still names it (a
 * program may close descriptors it did not open). Normal world, once. */
void index_cache_deferred_directory(int fd, uint64_t device, uint64_t inode);

/* DEFERRED's data, mapped and checked whole on the first call (which
 * publishes it for the next): the header against its fit, the checksum,
 * offsets and strings, the debug files it came from; NULL when the file
 * is gone, changed since the load or damaged. Signal-safe: openat, fstat, mmap; no lock, no
 * malloc (the module_data comes from a reserve, else a page of its own). */
const struct module_data *index_cache_deferred_map(struct index_cache_deferred *deferred);

/* The cache directory: the one set already (by a load, or a reader
 * before), else PATH opened, if it is ours alone (a directory, not a
 * symlink, EUID's, nobody else's to read or write), and made the one
 * first uses open files in. Returns its fd, or -1 (errno from the open,
 * when that failed). Signal-safe; two callers at once agree on one. */
int index_cache_deferred_open_directory(const char *path, unsigned euid);

/* How many deferred files were refused at their first use. Signal-safe. */
unsigned long long index_cache_deferred_refused(void);

#endif
