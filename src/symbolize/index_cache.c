/* index_cache.c: module index data kept on disk, one file per module, so
 * that a later process reads it instead of building it again.
 * World: normal (open, read, write, rename, readdir, malloc), under the
 * index's build lock.
 *
 * A file is checked at load by its header (its mtime still the one its
 * writer stamped, the key's facts, the debug files it came from) and
 * mapped and checked whole at its first use (index_cache_deferred.c, which
 * may be the crash handler; issue 26); a file written since its stamp is
 * mapped and checked whole at load (read_checked). Mapped, not read: files
 * are never written in place, so a mapping keeps the inode it checked.
 * Files are written to a temporary name and renamed: a reader sees a
 * whole file or none, and processes writing the same entry at once each
 * rename a whole file. */
#define _GNU_SOURCE
#include "index_cache.h"
#include "index_cache_deferred.h"
#include "index_cache_format.h"
#include "index_cache_key.h"
#include "path_join.h"
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

static struct index_cache_statistics statistics;
static int directory = -1;
static int prepared, stores_stopped, trimmed_once;
static uint64_t stored_since_trim;   /* bytes */
static unsigned temporary_serial;
static uid_t euid;   /* geteuid() at the start of this rebuild */

size_t index_cache_header_bytes(void)
{
    return sizeof(struct cache_header);
}

/* ---- validation: the file probes (normal world: stat) ---- */

int index_cache_image_valid(const unsigned char *image, size_t size)
{
    struct cache_header header;
    struct index_cache_arrays arrays;
    if (!index_cache_image_payload_valid(image, size))
        return 0;
    memcpy(&header, image, sizeof header);
    index_cache_image_arrays(image, &arrays);
    return file_probes_well_formed((const unsigned char *)arrays.strings + arrays.strings_bytes,
                                   header.probes_bytes);
}

/* ---- the directory ---- */

/* A directory of ours: not a symlink, owned by this user, nobody else's
 * to read or write. Made (PARENT first, if given) only when it is not
 * there: a warm load pays one open (issue 26). Returns its fd or -1. */
static int open_directory(const char *path, const char *parent)
{
    int fd = index_cache_deferred_open_directory(path, euid);
    if (fd < 0 && errno == ENOENT) {
        if (parent != NULL)
            mkdir(parent, 0700);
        mkdir(path, 0700);
        fd = index_cache_deferred_open_directory(path, euid);
    }
    return fd;
}

/* The directory of path_join.h's rule for OPTIONS and the environment. */
static int directory_path(const struct options *options, char *path, size_t size, char *parent)
{
    return cache_directory_join(options->index_cache_path, secure_getenv("XDG_CACHE_HOME"),
                                secure_getenv("HOME"), (unsigned)geteuid(), path, size, parent);
}

/* Whether OPTIONS let this process use the cache: not in set-user-ID
 * programs and the like, neither the user's files nor ours. */
static int cache_allowed(const struct options *options)
{
    return options->index_cache && !getauxval(AT_SECURE);
}

int index_cache_allowed(const struct options *options)
{
    return cache_allowed(options);
}

static unsigned char given_builder_id[MODULE_BUILD_ID_MAX];
static unsigned given_builder_id_length;

void index_cache_set_builder(const unsigned char *id, unsigned length)
{
    given_builder_id_length = length <= MODULE_BUILD_ID_MAX ? length : 0;
    memcpy(given_builder_id, id, given_builder_id_length);
}

/* This library's own build-id: data built by other code may differ. */
static void find_builder(const struct module_list *list)
{
    if (given_builder_id_length > 0) {
        index_cache_key_set_builder(given_builder_id, given_builder_id_length);
        return;
    }
    uintptr_t here = (uintptr_t)&find_builder;
    for (size_t i = 0; i < list->count; i++) {
        const struct module_info *module = &list->modules[i];
        if (module->start <= here && here < module->end)
            index_cache_key_set_builder(module->build_id, module->build_id_length);
    }
}

void index_cache_prepare(const struct options *options, const struct module_list *list)
{
    euid = geteuid(); /* once a rebuild, not once a file */
    if (prepared)
        return;
    prepared = 1;
    if (!cache_allowed(options))
        return;
    find_builder(list);
    if (index_cache_key_builder_length() == 0)
        return;
    char path[OPTIONS_PATH_MAX + 64], parent[sizeof path];
    if (directory_path(options, path, sizeof path, parent) == 0)
        directory = open_directory(path, parent[0] != '\0' ? parent : NULL);
    statistics.enabled = directory >= 0;
}

/* ---- one module's file ---- */

/* Returns 0, or -1 when MODULE cannot be cached (no build-id, no file).
 * LINE_MODE: index_cache_line_mode. */
static int key_of(const struct module_info *module, int line_mode, int demangle,
                  struct cache_key *key)
{
    char roots[DEBUG_FILE_ROOTS_MAX];
    if (directory < 0)
        return -1;
    debug_file_roots(roots, sizeof roots);
    return index_cache_key_of(module, line_mode, demangle, roots, key);
}

/* A file to trust only if it is ours alone (index_cache_status_ours). */
static int file_is_ours(int fd, struct stat *status)
{
    return fstat(fd, status) == 0 && index_cache_status_ours(status, euid);
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
static struct module_data *read_checked(int fd, const struct stat *status,
                                        const struct cache_key *key,
                                        const struct cache_fit *fit, size_t *line_bytes)
{
    size_t size = (size_t)status->st_size;
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
    if (!index_cache_header_fits(&header, fit) ||
        !file_probes_still_hold((const unsigned char *)arrays.strings + header.strings_bytes,
                                header.probes_bytes))
        goto refuse;
    /* Sound: stamped again, so that the next loads leave its check to its
     * first use (it was written since its writer's stamp, or its stamp
     * was lost to a copy). */
    uint64_t stamp = index_cache_stamp(key->name, (int)header.lines_truncated);
    if (header.stamp_nanoseconds == stamp &&
        (uint64_t)status->st_mtim.tv_nsec != stamp) {
        struct timespec times[2] = { { 0, UTIME_OMIT }, { status->st_mtim.tv_sec, (long)stamp } };
        futimens(fd, times);
    }
    *data = (struct module_data){ arrays.symbols, arrays.symbol_count, arrays.lines,
                                  arrays.line_count, arrays.strings, sizeof *data + size,
                                  (int)header.lines_truncated, (int)header.demangled,
                                  header.strings_bytes, header.name_bytes_read, 1,
                                  arrays.inlines, arrays.inline_count, arrays.inline_ranges,
                                  arrays.inline_range_count, NULL, 0 };
    *line_bytes = header.line_bytes;
    return data;
refuse:
    arena_give_back(sizeof *data);
unmap:
    munmap(file, size);
    return NULL;
}

/* How stale a file's atime may be before a load marks it used again. */
#define USED_MARK_SECONDS 60

/* KEY's file marked used now (its atime, which the trim orders by,
 * index_cache_finish), at most once a minute. A warm load reads nothing
 * of the file, so the kernel never moves its atime: the files every
 * process loads looked unused since their writing, were the first the
 * trim removed, and went between a process's load and its first use,
 * whose frames in that module then had no name (issue 27's
 * test_guard_pages, on a machine whose cache was at its cap). */
static void mark_used(const struct cache_key *key, const struct stat *status)
{
    if (time(NULL) - status->st_atime < USED_MARK_SECONDS)
        return;
    struct timespec times[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
    utimensat(directory, key->name, times, AT_SYMLINK_NOFOLLOW);
}

/* The file of KEY (STATUS, from fstatat) taken on its name's facts alone,
 * its module_data a placeholder for index_cache_deferred_map (issue 26):
 * only when it is ours and its mtime still has the nanoseconds its writer
 * stamped for a file whose lines are whole (a file written since, damaged
 * or cut, is checked whole at once by read_checked), and whole lines would
 * fit LINE_BUDGET (they are inside the file). Its header, checksum,
 * offsets, strings and debug files wait for the first use, in whatever
 * world that comes. Returns the data or NULL. */
static struct module_data *deferred(const struct stat *status, const struct cache_key *key,
                                    const struct cache_fit *fit, size_t *line_bytes)
{
    if (!index_cache_takes_unread(status, key, fit, euid))
        return NULL;
    /* Kept for the process's life, as the index's cache of module data;
     * malloc'd, not in the arena: a warm load then maps no arena at all. */
    struct deferred_module {
        struct module_data data;
        struct index_cache_deferred deferred;
    } *both = calloc(1, sizeof *both);
    if (both == NULL)
        return NULL;
    memcpy(both->deferred.name, key->name, sizeof both->deferred.name);
    both->deferred.fit = *fit;
    both->deferred.euid = euid;
    both->data.in_shared_mapping = 1;   /* never unmapped: readers keep what they mapped */
    both->data.deferred = &both->deferred;
    /* At most the file's size: the line budget's account of the modules
     * that follow is then never more generous than it was at the build. */
    *line_bytes = fit->line_budget != 0 ? (size_t)status->st_size : 0;
    return &both->data;
}

const struct module_data *index_cache_load(const struct module_info *module, size_t line_budget,
                                           int line_flags, int demangle, size_t *line_bytes)
{
    struct cache_key key;
    struct stat status;
    int inlines = (line_flags & LINE_INLINES) != 0;
    *line_bytes = 0;
    if (key_of(module, index_cache_line_mode(line_budget, line_flags), demangle, &key) < 0)
        return NULL;
    struct cache_fit fit;
    index_cache_fit_of(module, &key, line_budget, inlines, demangle, &fit);
    if (fstatat(directory, key.name, &status, AT_SYMLINK_NOFOLLOW) != 0) {
        statistics.missed++;
        return NULL;
    }
    struct module_data *data = deferred(&status, &key, &fit, line_bytes);
    if (data != NULL) {
        mark_used(&key, &status);
        statistics.loaded++;
        return data;
    }
    int fd = openat(directory, key.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 && file_is_ours(fd, &status))  /* ELOOP: a symlink where our file should be */
        data = read_checked(fd, &status, &key, &fit, line_bytes);
    if (fd >= 0)
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
                               size_t line_bytes, const struct file_probes *probes,
                               uint64_t stamp, size_t *size)
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
    static const char magic[8] = CACHE_MAGIC;
    memcpy(header.magic, magic, sizeof header.magic);
    header.format = CACHE_FORMAT;
    header.header_bytes = sizeof header;
    header.file_bytes = *size;
    struct cache_fit fit;
    index_cache_fit_of(module, key, line_budget, inlines, 0, &fit);
    memcpy(header.builder_id, fit.builder_id, sizeof header.builder_id);
    header.builder_id_length = fit.builder_id_length;
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
    header.stamp_nanoseconds = stamp;
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
        key_of(module, index_cache_line_mode(line_budget, line_flags), data->names_demangled, &key) < 0)
        return;
    /* The mtime's nanoseconds the file gets after its last write: any
     * write since changes them (deferred). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t stamp = index_cache_stamp(key.name, data->lines_truncated);
    unsigned char *image =
        image_of(module, &key, line_budget, (line_flags & LINE_INLINES) != 0, data, line_bytes,
                 probes, stamp, &size);
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
    struct timespec times[2] = { { 0, UTIME_OMIT }, { now.tv_sec, (long)stamp } };
    if (!failed)
        futimens(fd, times); /* else the file is checked whole by every load */
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
    out->refused += index_cache_deferred_refused();
}
