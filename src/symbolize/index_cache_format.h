/* index_cache_format.h: the layout of an index cache file, shared by the
 * loader and writer (index_cache.c, normal world), the validator
 * (index_cache_image.c) and the mapping at first use
 * (index_cache_deferred.c), both signal-safe. Private to those three. */
#ifndef EXECINFO_EX_INDEX_CACHE_FORMAT_H
#define EXECINFO_EX_INDEX_CACHE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "index_cache.h"

/* 3: symbols carry a demangled name's offset, the header says whether
 * names were demangled; the inlined calls and their ranges follow the
 * lines (issue 15). 4: the header carries the nanoseconds its writer set
 * as the file's mtime (stamp_nanoseconds), and the debug files' paths are
 * stored with their NUL (issue 26: a load finds a file by its stamp and
 * the first use, maybe in a handler, checks it). A file of another
 * format is refused. */
#define CACHE_FORMAT 4
#define CACHE_MAGIC { 'E', 'X', 'I', 'X', 'I', 'D', 'X', '\n' }

struct cache_header {
    char magic[8];
    uint32_t format;
    uint32_t header_bytes;
    uint64_t checksum;          /* INDEX_CACHE_CHECKSUM_AT: of every other byte */
    uint64_t file_bytes;
    /* what shaped the data */
    unsigned char builder_id[MODULE_BUILD_ID_MAX];
    unsigned char build_id[MODULE_BUILD_ID_MAX];
    uint32_t builder_id_length, build_id_length;
    uint64_t identity[5];       /* the module file's (device, inode, size, mtime);
                                   a memory image: its size in [2] */
    uint32_t with_lines;        /* built with a line budget */
    uint32_t lines_truncated;   /* the budget ran out */
    uint32_t with_inlines;      /* the inlined calls were read (inlines=1) */
    uint32_t demangled;         /* built with demangle=1 */
    uint64_t line_budget, line_bytes;
    /* what follows: symbols, lines, inlined calls, their ranges, strings,
     * the file probes */
    uint64_t symbol_count, line_count, inline_count, inline_range_count;
    uint64_t strings_bytes, probes_bytes;
    uint64_t name_bytes_read;
    /* The file's mtime nanoseconds, set by its writer after the last
     * write (index_cache_stamp): a file written since (damaged, cut) has
     * another mtime, and a load then checks it whole at once, as before
     * format 4. */
    uint64_t stamp_nanoseconds;
};

/* What a file must have been made for: this library, the module's
 * build-id and file identity, the line budget, inlined calls, demangled
 * names. */
struct cache_fit {
    unsigned char builder_id[MODULE_BUILD_ID_MAX];
    unsigned char build_id[MODULE_BUILD_ID_MAX];
    unsigned builder_id_length, build_id_length;
    uint64_t identity[5];
    uint64_t line_budget;
    int inlines, demangle;
};

_Static_assert(offsetof(struct cache_header, checksum) == INDEX_CACHE_CHECKSUM_AT,
               "the checksum's place is part of the format");
_Static_assert(sizeof(struct cache_header) % 8 == 0, "the symbols that follow are aligned");
_Static_assert(sizeof(struct module_data) % 8 == 0, "the header that follows is aligned");

/* The hash of the checksum and of the file names: four lanes, BYTES mixed
 * in. Pure. */
void index_cache_mix(const unsigned char *bytes, size_t size, uint64_t lanes[4]);

/* Whether HEADER (read from a file of SIZE bytes) is one of this format
 * whose sizes add up to SIZE. Pure. */
int index_cache_header_valid(const struct cache_header *header, size_t size);

/* Whether HEADER was made for FIT. Pure. */
int index_cache_header_fits(const struct cache_header *header, const struct cache_fit *fit);

/* The mtime nanoseconds its writer gives a file named NAME (never 0,
 * which a file system without them shows): a load that finds them checks
 * the file by its name's facts alone and leaves the rest to its first
 * use. Odd for a file whose lines the budget cut (its header must be read
 * at load: only the same budget may use it). Pure. */
uint64_t index_cache_stamp(const char *name, int lines_truncated);

/* Whether STATUS is a file to trust only if it is ours alone: regular, one
 * link, EUID's, written by nobody else, of a size a file may have. Pure. */
struct stat;
int index_cache_status_ours(const struct stat *status, unsigned euid);

/* Whether IMAGE (SIZE bytes) is well formed but for its file probes
 * (which the load checked, file_probes.c): the header, checksum, offsets,
 * order and strings. Pure, signal-safe. */
int index_cache_image_payload_valid(const unsigned char *image, size_t size);

/* Whether IMAGE (SIZE bytes) may be read by readers that check each offset
 * they follow and each name they show (module_data's checked_at_use): its
 * header of this format, its sizes adding up to SIZE, its strings ending
 * with a NUL. Constant time: the arrays' pages stay untouched until a
 * lookup reads them. Pure, signal-safe. */
int index_cache_image_usable(const unsigned char *image, size_t size);

#endif
