/* index_cache.c: module index data kept on disk, one file per module, so
 * that a later process reads it instead of building it again.
 * World: normal (open, read, write, rename, readdir, malloc), under the
 * index's build lock.
 *
 * Files are read with pread into private anonymous memory, never mapped:
 * what was checked is then what the signal-safe readers see, whatever
 * happens to the file afterwards (a mapping of it would change with a
 * rewrite of the same inode, and fault with SIGBUS after a truncation).
 * Files are written to a temporary name and renamed: a reader sees a
 * whole file or none, and processes writing the same entry at once each
 * rename a whole file. */
#define _GNU_SOURCE
#include "index_cache.h"
#include "debug_roots.h"
#include "file_probes.h"
#include "module_data.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 3: symbols carry a demangled name's offset, the header says whether
 * names were demangled; the inlined calls and their ranges follow the
 * lines (issue 15). A file of another format is refused. */
#define CACHE_FORMAT 3
static const char cache_magic[8] = { 'E', 'X', 'I', 'X', 'I', 'D', 'X', '\n' };

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
};

_Static_assert(offsetof(struct cache_header, checksum) == INDEX_CACHE_CHECKSUM_AT,
               "the checksum's place is part of the format");
_Static_assert(sizeof(struct cache_header) % 8 == 0, "the symbols that follow are aligned");
_Static_assert(sizeof(struct module_data) % 8 == 0, "the header that follows is aligned");

static struct index_cache_statistics statistics;
static int directory = -1;
static int prepared, stores_stopped, trimmed_once;
static uint64_t stored_since_trim;   /* bytes */
static unsigned char builder_id[MODULE_BUILD_ID_MAX];
static unsigned builder_id_length;
static unsigned temporary_serial;

size_t index_cache_header_bytes(void)
{
    return sizeof(struct cache_header);
}

/* ---- checksum and validation (pure) ---- */

static uint64_t mix(const unsigned char *bytes, size_t size, uint64_t lanes[4])
{
    const uint64_t k = 0x9e3779b97f4a7c15u;
    size_t at = 0;
    for (; at + 32 <= size; at += 32)
        for (int i = 0; i < 4; i++) {
            uint64_t word;
            memcpy(&word, bytes + at + 8 * i, 8);
            lanes[i] = (lanes[i] ^ word) * k;
            lanes[i] ^= lanes[i] >> 29;
        }
    for (; at < size; at++) {
        lanes[at & 3] = (lanes[at & 3] ^ bytes[at]) * k;
        lanes[at & 3] ^= lanes[at & 3] >> 29;
    }
    return 0;
}

uint64_t index_cache_image_checksum(const unsigned char *image, size_t size)
{
    uint64_t lanes[4] = { 1, 2, 3, (uint64_t)size };
    size_t after = INDEX_CACHE_CHECKSUM_AT + 8;
    mix(image, size < INDEX_CACHE_CHECKSUM_AT ? size : INDEX_CACHE_CHECKSUM_AT, lanes);
    if (size > after)
        mix(image + after, size - after, lanes);
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++)
        sum = (sum ^ lanes[i]) * 0xff51afd7ed558ccdu + (uint64_t)i;
    return sum ^ (sum >> 33);
}

/* Every byte printable (as module_data.c stores names) or a NUL, the
 * last a NUL: any offset inside then names a whole string. */
static int strings_valid(const unsigned char *strings, size_t size)
{
    if (size == 0)
        return 1;
    if (strings[size - 1] != '\0')
        return 0;
    for (size_t i = 0; i < size; i++)
        if ((strings[i] < 0x20 && strings[i] != 0) || strings[i] == 0x7f)
            return 0;
    return 1;
}

/* Both names of every symbol inside the strings (which end in NUL). */
static int symbols_valid(const struct index_symbol *symbols, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (symbols[i].name >= strings || symbols[i].demangled >= strings ||
            (i > 0 && symbols[i].start < symbols[i - 1].start))
            return 0;
    }
    return 1;
}

static int lines_valid(const struct index_line *lines, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (lines[i].file >= strings || (i > 0 && lines[i].address < lines[i - 1].address))
            return 0;
    }
    return 1;
}

/* A string offset, or none where NONE_ALLOWED. */
static int string_valid(uint32_t offset, size_t strings, int none_allowed)
{
    return offset < strings || (none_allowed && offset == INDEX_INLINE_NONE);
}

/* Every name and file inside the strings, every parent before its call
 * (so that a walk up a chain ends). */
static int inlines_valid(const struct index_inline *inlines, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (!string_valid(inlines[i].name, strings, 1) ||
            !string_valid(inlines[i].call_file, strings, 1) ||
            (inlines[i].parent != INDEX_INLINE_NONE && inlines[i].parent >= i))
            return 0;
    }
    return 1;
}

/* Strictly increasing, each naming a call of the file or none. */
static int inline_ranges_valid(const struct index_inline_range *ranges, size_t count,
                               size_t inline_count)
{
    for (size_t i = 0; i < count; i++) {
        if ((ranges[i].call != INDEX_INLINE_NONE && ranges[i].call >= inline_count) ||
            (i > 0 && ranges[i].from <= ranges[i - 1].from))
            return 0;
    }
    return 1;
}

/* The bytes of the arrays that follow the header. */
static uint64_t arrays_bytes(const struct cache_header *header)
{
    return header->symbol_count * sizeof(struct index_symbol) +
           header->line_count * sizeof(struct index_line) +
           header->inline_count * sizeof(struct index_inline) +
           header->inline_range_count * sizeof(struct index_inline_range);
}

/* Sizes add up without overflow. */
static int sizes_valid(const struct cache_header *header, size_t size)
{
    const uint64_t most = (uint64_t)1 << 40;
    if (header->symbol_count > most / sizeof(struct index_symbol) ||
        header->line_count > most / sizeof(struct index_line) ||
        header->inline_count > most / sizeof(struct index_inline) ||
        header->inline_range_count > most / sizeof(struct index_inline_range) ||
        header->strings_bytes > most || header->probes_bytes > most)
        return 0;
    uint64_t total = sizeof *header + arrays_bytes(header) + header->strings_bytes +
                     header->probes_bytes;
    return total == size && header->file_bytes == size && header->strings_bytes <= UINT32_MAX &&
           header->inline_count < INDEX_INLINE_NONE &&
           (header->strings_bytes > 0 || (header->symbol_count == 0 && header->line_count == 0)) &&
           (header->with_inlines || (header->inline_count == 0 && header->inline_range_count == 0));
}

void index_cache_image_arrays(const unsigned char *image, struct index_cache_arrays *out)
{
    struct cache_header header;
    memcpy(&header, image, sizeof header);
    out->symbols = (const struct index_symbol *)(image + sizeof header);
    out->symbol_count = header.symbol_count;
    out->lines = (const struct index_line *)(out->symbols + header.symbol_count);
    out->line_count = header.line_count;
    out->inlines = (const struct index_inline *)(out->lines + header.line_count);
    out->inline_count = header.inline_count;
    out->inline_ranges = (const struct index_inline_range *)(out->inlines + header.inline_count);
    out->inline_range_count = header.inline_range_count;
    out->strings = (const char *)(out->inline_ranges + header.inline_range_count);
    out->strings_bytes = header.strings_bytes;
}

int index_cache_image_valid(const unsigned char *image, size_t size)
{
    struct cache_header header;
    struct index_cache_arrays arrays;
    if (size < sizeof header || ((uintptr_t)image & 7) != 0)
        return 0;
    memcpy(&header, image, sizeof header);
    if (memcmp(header.magic, cache_magic, sizeof cache_magic) != 0 ||
        header.format != CACHE_FORMAT || header.header_bytes != sizeof header ||
        header.builder_id_length > MODULE_BUILD_ID_MAX ||
        header.build_id_length > MODULE_BUILD_ID_MAX || header.with_lines > 1 ||
        header.lines_truncated > 1 || header.with_inlines > header.with_lines ||
        header.demangled > 1 ||
        !sizes_valid(&header, size) ||
        header.checksum != index_cache_image_checksum(image, size))
        return 0;
    index_cache_image_arrays(image, &arrays);
    size_t strings = arrays.strings_bytes;
    return symbols_valid(arrays.symbols, arrays.symbol_count, strings) &&
           lines_valid(arrays.lines, arrays.line_count, strings) &&
           inlines_valid(arrays.inlines, arrays.inline_count, strings) &&
           inline_ranges_valid(arrays.inline_ranges, arrays.inline_range_count,
                               arrays.inline_count) &&
           strings_valid((const unsigned char *)arrays.strings, strings) &&
           file_probes_well_formed((const unsigned char *)arrays.strings + strings,
                                   header.probes_bytes);
}

/* ---- the directory ---- */

/* A directory of ours: not a symlink, owned by this user, nobody else's
 * to read or write. Returns its fd or -1. */
static int open_directory(const char *path)
{
    mkdir(path, 0700);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat status;
    if (fd < 0)
        return -1;
    if (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode) || status.st_uid != geteuid() ||
        (status.st_mode & 077) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* $XDG_CACHE_HOME/execinfo_ex, ~/.cache/execinfo_ex, /tmp/execinfo_ex-UID. */
static int open_default_directory(void)
{
    char path[OPTIONS_PATH_MAX + 64];
    const char *base = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    int length;
    if (base != NULL && base[0] == '/') {
        mkdir(base, 0700);
        length = snprintf(path, sizeof path, "%s/execinfo_ex", base);
    } else if (home != NULL && home[0] == '/') {
        char parent[sizeof path];
        if (snprintf(parent, sizeof parent, "%s/.cache", home) < (int)sizeof parent)
            mkdir(parent, 0700);
        length = snprintf(path, sizeof path, "%s/.cache/execinfo_ex", home);
    } else {
        length = snprintf(path, sizeof path, "/tmp/execinfo_ex-%u", (unsigned)geteuid());
    }
    if (length <= 0 || (size_t)length >= sizeof path)
        return -1;
    return open_directory(path);
}

/* This library's own build-id: data built by other code may differ. */
static void find_builder(const struct module_list *list)
{
    uintptr_t here = (uintptr_t)&find_builder;
    for (size_t i = 0; i < list->count; i++) {
        const struct module_info *module = &list->modules[i];
        if (module->start <= here && here < module->end) {
            memcpy(builder_id, module->build_id, sizeof builder_id);
            builder_id_length = module->build_id_length;
        }
    }
}

void index_cache_prepare(const struct options *options, const struct module_list *list)
{
    if (prepared)
        return;
    prepared = 1;
    /* set-user-ID and the like: neither the user's files nor ours */
    if (!options->index_cache || getauxval(AT_SECURE))
        return;
    find_builder(list);
    if (builder_id_length == 0)
        return;
    directory = options->index_cache_path[0] != '\0' ? open_directory(options->index_cache_path)
                                                     : open_default_directory();
    statistics.enabled = directory >= 0;
}

/* ---- one module's file ---- */

struct cache_key {
    char name[2 * MODULE_BUILD_ID_MAX + 32];
    uint64_t identity[5];
};

/* Returns 0, or -1 when MODULE cannot be cached (no build-id, no file).
 * LINE_MODE: 0 no lines, 1 lines, 2 lines and inlined calls. */
static int key_of(const struct module_info *module, int line_mode, int demangle,
                  struct cache_key *key)
{
    memset(key, 0, sizeof *key);
    if (directory < 0 || module->build_id_length == 0)
        return -1;
    if (module->memory_image != NULL) {
        key->identity[2] = module->memory_size;
    } else {
        struct stat file;
        if (stat(module->file_path, &file) != 0 || !S_ISREG(file.st_mode))
            return -1;
        key->identity[0] = (uint64_t)file.st_dev;
        key->identity[1] = (uint64_t)file.st_ino;
        key->identity[2] = (uint64_t)file.st_size;
        key->identity[3] = (uint64_t)file.st_mtim.tv_sec;
        key->identity[4] = (uint64_t)file.st_mtim.tv_nsec;
    }
    /* The path too: the debug file candidates follow its directory; and
     * the debug roots, which give other candidates (a root added later
     * must be searched, not answered from a copy made without it). */
    char roots[DEBUG_FILE_ROOTS_MAX];
    debug_file_roots(roots, sizeof roots);
    uint64_t lanes[4] = { CACHE_FORMAT, (uint64_t)line_mode, 5 + (uint64_t)(demangle != 0), 7 };
    mix(builder_id, builder_id_length, lanes);
    mix((const unsigned char *)key->identity, sizeof key->identity, lanes);
    mix((const unsigned char *)module->file_path, strlen(module->file_path), lanes);
    mix((const unsigned char *)roots, strlen(roots), lanes);
    uint64_t hash = lanes[0] ^ lanes[1] * 3 ^ lanes[2] * 5 ^ lanes[3] * 7;
    static const char digits[] = "0123456789abcdef";
    char *at = key->name;
    for (unsigned i = 0; i < module->build_id_length; i++) {
        *at++ = digits[module->build_id[i] >> 4];
        *at++ = digits[module->build_id[i] & 15];
    }
    *at++ = '-';
    for (int shift = 60; shift >= 0; shift -= 4)
        *at++ = digits[(hash >> shift) & 15];
    memcpy(at, ".idx", 5);
    return 0;
}

/* Whether HEADER was made for MODULE under KEY with LINE_BUDGET, INLINES
 * and DEMANGLE. */
static int header_fits(const struct cache_header *header, const struct module_info *module,
                       const struct cache_key *key, size_t line_budget, int inlines,
                       int demangle)
{
    if (header->builder_id_length != builder_id_length ||
        memcmp(header->builder_id, builder_id, builder_id_length) != 0 ||
        header->build_id_length != module->build_id_length ||
        memcmp(header->build_id, module->build_id, module->build_id_length) != 0 ||
        memcmp(header->identity, key->identity, sizeof key->identity) != 0 ||
        header->with_lines != (line_budget > 0) ||
        header->with_inlines != (line_budget > 0 && inlines) ||
        header->demangled != (demangle != 0))
        return 0;
    if (line_budget == 0)
        return 1;
    /* Whole lines fit any budget as large; cut ones only the same. */
    return header->lines_truncated ? header->line_budget == line_budget
                                   : header->line_bytes <= line_budget;
}

/* A file to trust only if it is ours alone: regular, one link, this
 * user's, written by nobody else. */
static int file_is_ours(int fd, struct stat *status)
{
    return fstat(fd, status) == 0 && S_ISREG(status->st_mode) && status->st_nlink == 1 &&
           status->st_uid == geteuid() && (status->st_mode & 022) == 0 &&
           status->st_size >= (off_t)sizeof(struct cache_header) &&
           (uint64_t)status->st_size <= INDEX_CACHE_BYTES_MAX;
}

/* The data read in one rebuild share mappings of at least ARENA_BYTES
 * (untouched pages cost nothing), made read-only by index_cache_finish
 * before the snapshot is published: a mapping and an mprotect for each
 * module were a third of a warm load. */
#define ARENA_BYTES ((size_t)1 << 20)
static unsigned char *arena;
static size_t arena_size, arena_used;

static void arena_seal(void)
{
    if (arena != NULL) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t used = (arena_used + page - 1) / page * page;
        /* The untouched rest goes back: a refresh per dlopen would
         * otherwise keep up to a mapping's worth of address space each. */
        if (used < arena_size)
            munmap(arena + used, arena_size - used);
        if (used > 0)
            mprotect(arena, used, PROT_READ);
    }
    arena = NULL;
    arena_size = arena_used = 0;
}

static void *arena_take(size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (arena == NULL || arena_size - arena_used < bytes) {
        arena_seal();
        size_t size = bytes > ARENA_BYTES ? bytes : ARENA_BYTES;
        void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED)
            return NULL;
        arena = map;
        arena_size = size;
    }
    void *taken = arena + arena_used;
    arena_used += bytes;
    return taken;
}

/* The last arena_take, refused. */
static void arena_give_back(size_t bytes)
{
    arena_used -= (bytes + 15) & ~(size_t)15;
}

/* FD's file mapped (MAP_PRIVATE, read-only), checked whole; its
 * module_data header in the arena. Mapped rather than read into the arena
 * (issue 26): a warm load of /bin/true read 245 KB into 60 fresh anonymous
 * pages, each a page fault, and copied it; the file's own pages are in the
 * page cache and fault in 16 at a time. Files are replaced by rename, never
 * written in place (above), so the mapping keeps the inode it checked.
 * Returns the data or NULL. */
static struct module_data *read_checked(int fd, size_t size, const struct module_info *module,
                                        const struct cache_key *key, size_t line_budget,
                                        int inlines, int demangle, size_t *line_bytes)
{
    void *file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (file == MAP_FAILED)
        return NULL;
    const unsigned char *image = file;
    struct module_data *data = arena_take(sizeof *data);
    struct cache_header header;
    if (data == NULL)
        goto unmap;
    if (!index_cache_image_valid(image, size))
        goto refuse;
    memcpy(&header, image, sizeof header);
    struct index_cache_arrays arrays;
    index_cache_image_arrays(image, &arrays);
    if (!header_fits(&header, module, key, line_budget, inlines, demangle) ||
        !file_probes_still_hold((const unsigned char *)arrays.strings + header.strings_bytes,
                                header.probes_bytes))
        goto refuse;
    *data = (struct module_data){ arrays.symbols, arrays.symbol_count, arrays.lines,
                                  arrays.line_count, arrays.strings, sizeof *data + size,
                                  (int)header.lines_truncated, (int)header.demangled,
                                  header.strings_bytes, header.name_bytes_read, 1,
                                  arrays.inlines, arrays.inline_count, arrays.inline_ranges,
                                  arrays.inline_range_count };
    *line_bytes = header.line_bytes;
    return data;
refuse:
    arena_give_back(sizeof *data);
unmap:
    munmap(file, size);
    return NULL;
}

/* The key's part: 0 no lines; else 1, plus 1 with the inlined calls,
 * plus 2 with the module's own line table only (LINE_FLAGS, module_data.h). */
static int line_mode(size_t line_budget, int line_flags)
{
    if (line_budget == 0)
        return 0;
    return 1 + ((line_flags & LINE_INLINES) != 0) + 2 * ((line_flags & LINE_OWN_TABLE_ONLY) != 0);
}

const struct module_data *index_cache_load(const struct module_info *module, size_t line_budget,
                                           int line_flags, int demangle, size_t *line_bytes)
{
    struct cache_key key;
    struct stat status;
    int inlines = (line_flags & LINE_INLINES) != 0;
    *line_bytes = 0;
    if (key_of(module, line_mode(line_budget, line_flags), demangle, &key) < 0)
        return NULL;
    int fd = openat(directory, key.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        /* ELOOP: a symlink where our file should be */
        if (errno == ENOENT)
            statistics.missed++;
        else
            statistics.refused++;
        return NULL;
    }
    struct module_data *data = NULL;
    if (file_is_ours(fd, &status))
        data = read_checked(fd, (size_t)status.st_size, module, &key, line_budget, inlines,
                            demangle, line_bytes);
    close(fd);
    if (data == NULL) {
        statistics.refused++;
        return NULL;
    }
    statistics.loaded++;
    return data;
}

static int write_all(int fd, const void *bytes, size_t size)
{
    const char *at = bytes;
    while (size > 0) {
        ssize_t wrote = write(fd, at, size);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            return -1;
        at += wrote;
        size -= (size_t)wrote;
    }
    return 0;
}

/* The whole file, in one malloc'd image (checksummed as a reader will). */
static unsigned char *image_of(const struct module_info *module, const struct cache_key *key,
                               size_t line_budget, int inlines, const struct module_data *data,
                               size_t line_bytes, const struct file_probes *probes, size_t *size)
{
    size_t symbols = data->symbol_count * sizeof(struct index_symbol);
    size_t lines = data->line_count * sizeof(struct index_line);
    size_t calls = data->inline_count * sizeof(struct index_inline);
    size_t ranges = data->inline_range_count * sizeof(struct index_inline_range);
    size_t strings = data->name_bytes;
    size_t probes_bytes = probes != NULL ? probes->size : 0;
    /* What pack() made: header, symbols, lines, inlined calls, ranges,
     * strings, nothing else. */
    if (sizeof *data + symbols + lines + calls + ranges + strings != data->mapped_bytes)
        return NULL;
    *size = sizeof(struct cache_header) + symbols + lines + calls + ranges + strings + probes_bytes;
    unsigned char *image = malloc(*size);
    if (image == NULL)
        return NULL;
    struct cache_header header;
    memset(&header, 0, sizeof header);
    memcpy(header.magic, cache_magic, sizeof header.magic);
    header.format = CACHE_FORMAT;
    header.header_bytes = sizeof header;
    header.file_bytes = *size;
    memcpy(header.builder_id, builder_id, sizeof header.builder_id);
    header.builder_id_length = builder_id_length;
    memcpy(header.build_id, module->build_id, sizeof header.build_id);
    header.build_id_length = module->build_id_length;
    memcpy(header.identity, key->identity, sizeof header.identity);
    header.with_lines = line_budget > 0;
    header.lines_truncated = data->lines_truncated != 0;
    header.with_inlines = line_budget > 0 && inlines;
    header.demangled = data->names_demangled != 0;
    header.line_budget = line_budget;
    header.line_bytes = line_bytes;
    header.symbol_count = data->symbol_count;
    header.line_count = data->line_count;
    header.inline_count = data->inline_count;
    header.inline_range_count = data->inline_range_count;
    header.strings_bytes = strings;
    header.probes_bytes = probes_bytes;
    header.name_bytes_read = data->name_bytes_read;
    unsigned char *at = image;
    memcpy(at, &header, sizeof header);
    memcpy(at += sizeof header, data->symbols, symbols);
    memcpy(at += symbols, data->lines, lines);
    memcpy(at += lines, data->inlines, calls);
    memcpy(at += calls, data->inline_ranges, ranges);
    memcpy(at += ranges, data->strings, strings);
    if (probes_bytes > 0)
        memcpy(at + strings, probes->bytes, probes_bytes);
    header.checksum = index_cache_image_checksum(image, *size);
    memcpy(image, &header, sizeof header);
    return image;
}

void index_cache_store(const struct module_info *module, size_t line_budget, int line_flags,
                       const struct module_data *data, size_t line_bytes,
                       const struct file_probes *probes)
{
    struct cache_key key;
    size_t size;
    if (stores_stopped || data == NULL || (probes != NULL && probes->failed) ||
        key_of(module, line_mode(line_budget, line_flags), data->names_demangled, &key) < 0)
        return;
    unsigned char *image =
        image_of(module, &key, line_budget, (line_flags & LINE_INLINES) != 0, data, line_bytes,
                 probes, &size);
    if (image == NULL || size > INDEX_CACHE_BYTES_MAX || !index_cache_image_valid(image, size)) {
        free(image);
        return;
    }
    /* A write past RLIMIT_FSIZE would kill the program with SIGXFSZ. */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        size > limit.rlim_cur) {
        statistics.store_failed++;
        free(image);
        return;
    }
    char temporary[64];
    snprintf(temporary, sizeof temporary, ".tmp-%ld-%u", (long)getpid(), temporary_serial++);
    int fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
    int failed = fd < 0 || write_all(fd, image, size) < 0;
    if (fd >= 0 && close(fd) != 0)
        failed = 1;
    if (!failed && renameat(directory, temporary, directory, key.name) != 0)
        failed = 1;
    if (failed) {
        if (fd >= 0)
            unlinkat(directory, temporary, 0);
        statistics.store_failed++;
        stores_stopped = 1; /* a full disk or a read-only directory stays so */
    } else {
        statistics.stored++;
        stored_since_trim += size;
    }
    free(image);
}

/* ---- the size cap ---- */

struct cached_file {
    char name[2 * MODULE_BUILD_ID_MAX + 32];
    time_t used;
    uint64_t bytes;
};

static int older_first(const void *a, const void *b)
{
    const struct cached_file *left = a, *right = b;
    return left->used < right->used ? -1 : left->used > right->used;
}

static int is_cache_name(const char *name, int *temporary)
{
    size_t length = strlen(name);
    *temporary = strncmp(name, ".tmp-", 5) == 0;
    return *temporary || (length > 4 && length < sizeof(((struct cached_file *)0)->name) &&
                          strcmp(name + length - 4, ".idx") == 0);
}

/* Oldest used first (atime, where the file system keeps it), until the
 * directory holds 3/4 of the cap; temporary files of writers that died
 * are removed after ten minutes. */
void index_cache_finish(void)
{
    arena_seal();
    /* Once a process, then every sixteenth of the cap: a program that
     * dlopens modules one by one must not list the directory each time. */
    if (stored_since_trim == 0 || directory < 0 ||
        (trimmed_once && stored_since_trim < INDEX_CACHE_BYTES_MAX / 16))
        return;
    trimmed_once = 1;
    stored_since_trim = 0;
    int fd = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *listing = fd >= 0 ? fdopendir(fd) : NULL;
    if (listing == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct cached_file *files = NULL;
    size_t count = 0, capacity = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL) {
        struct stat status;
        int temporary;
        if (!is_cache_name(entry->d_name, &temporary) ||
            fstatat(directory, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(status.st_mode))
            continue;
        if (temporary) {
            if (now - status.st_mtime > 600)
                unlinkat(directory, entry->d_name, 0);
            continue;
        }
        if (count == capacity) {
            size_t grown = capacity ? capacity * 2 : 64;
            struct cached_file *more = realloc(files, grown * sizeof *files);
            if (more == NULL)
                break;
            files = more;
            capacity = grown;
        }
        strcpy(files[count].name, entry->d_name);
        files[count].used = status.st_atime > status.st_mtime ? status.st_atime : status.st_mtime;
        files[count].bytes = (uint64_t)status.st_size;
        total += files[count].bytes;
        count++;
    }
    closedir(listing);
    if (total > INDEX_CACHE_BYTES_MAX) {
        qsort(files, count, sizeof *files, older_first);
        for (size_t i = 0; i < count && total > INDEX_CACHE_BYTES_MAX / 4 * 3; i++)
            if (unlinkat(directory, files[i].name, 0) == 0)
                total -= files[i].bytes;
    }
    free(files);
}

void index_cache_statistics(struct index_cache_statistics *out)
{
    *out = statistics;
}
