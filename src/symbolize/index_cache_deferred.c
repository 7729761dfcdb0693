/* index_cache_deferred.c: the first use of a cache file checked at load by
 * its header alone: mapped, checked whole, and published for later
 * readers.
 * World: signal-safe (the crash handler may be the first reader): the
 * file is opened with a raw openat (async-signal-safe, as open is), the
 * module_data that heads it is taken from a reserve in .bss, which costs
 * no page until used, and published with a compare-and-swap: two readers
 * at once (threads, or a handler over its own thread's first use) each
 * map and check, and the loser unmaps its copy. No one waits. */
#define _GNU_SOURCE
#include "index_cache_deferred.h"
#include "index_cache_format.h"
#include "file_probes.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int directory = -1;
static _Atomic uint64_t directory_device, directory_inode;
static atomic_ullong refused_count;

/* One module_data per module of a process is the rule; the reserve covers
 * a few hundred modules and the losers of races. */
#define RESERVE 256
static struct module_data reserve[RESERVE];
static atomic_size_t reserve_used;

void index_cache_deferred_directory(int fd, uint64_t device, uint64_t inode)
{
    directory_device = device;
    directory_inode = inode;
    directory = fd;
}

int index_cache_deferred_open_directory(const char *path, unsigned euid)
{
    int existing = atomic_load(&directory);
    if (existing >= 0)
        return existing;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat status;
    if (fd < 0)
        return -1;
    if (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode) || status.st_uid != euid ||
        (status.st_mode & 077) != 0) {
        close(fd);
        return -1;
    }
    /* The identity first: a reader that sees the descriptor checks it.
     * Two first openers at once open the same directory; the loser
     * closes its descriptor. */
    atomic_store(&directory_device, (uint64_t)status.st_dev);
    atomic_store(&directory_inode, (uint64_t)status.st_ino);
    if (!atomic_compare_exchange_strong(&directory, &existing, fd)) {
        close(fd);
        return existing;
    }
    return fd;
}

unsigned long long index_cache_deferred_refused(void)
{
    return atomic_load(&refused_count);
}

static struct module_data *take_slot(void)
{
    size_t slot = atomic_fetch_add(&reserve_used, 1);
    if (slot < RESERVE)
        return &reserve[slot];
    void *page = mmap(NULL, sizeof(struct module_data), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return page != MAP_FAILED ? page : NULL;
}

/* DEFERRED's file, open, if it is still ours and stamped as its writer
 * left it (its size in *SIZE); else -1. The directory must still be the
 * one checked at load (a program may have closed our descriptor and
 * opened another under its number). */
static int open_stamped(const struct index_cache_deferred *deferred, size_t *size)
{
    struct stat status;
    if (directory < 0 || fstat(directory, &status) != 0 ||
        (uint64_t)status.st_dev != directory_device || (uint64_t)status.st_ino != directory_inode)
        return -1;
    int fd = (int)syscall(SYS_openat, directory, deferred->name,
                          O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, &status) != 0 || !index_cache_status_ours(&status, deferred->euid) ||
        (!deferred->check_whole &&
         (uint64_t)status.st_mtim.tv_nsec != index_cache_stamp(deferred->name, 0))) {
        close(fd);
        return -1;
    }
    *size = (size_t)status.st_size;
    return fd;
}

/* Whether the mapped IMAGE (SIZE) may be read by readers that check what
 * they follow (index_cache_image_usable), was made for DEFERRED's fit, and
 * from debug files that are as they were. Not its checksum, nor every
 * offset, order and string, which would read every page of it at the
 * crash: its stamp says no one wrote it since its writer, who checked the
 * image whole before writing it (index_cache_store), and the readers
 * check each offset they follow, so a file damaged under an unchanged
 * mtime may give a wrong name, never a fault. */
static int image_fits(const struct index_cache_deferred *deferred, const unsigned char *image,
                      size_t size, struct cache_header *header,
                      struct index_cache_arrays *arrays)
{
    /* A file not stamped as its writer left it: every page checked, as
     * a load checks it (index_cache.c, read_checked). */
    if (deferred->check_whole ? !index_cache_image_payload_valid(image, size)
                              : !index_cache_image_usable(image, size))
        return 0;
    memcpy(header, image, sizeof *header);
    index_cache_image_arrays(image, arrays);
    const unsigned char *probes = (const unsigned char *)arrays->strings + header->strings_bytes;
    return (deferred->check_whole ||
            header->stamp_nanoseconds == index_cache_stamp(deferred->name, 0)) &&
           index_cache_header_fits(header, &deferred->fit) &&
           file_probes_well_formed(probes, header->probes_bytes) &&
           file_probes_still_hold(probes, header->probes_bytes);
}

/* DEFERRED's file mapped and checked, its module_data in a slot; NULL. */
static const struct module_data *map_checked(const struct index_cache_deferred *deferred)
{
    size_t size;
    int fd = open_stamped(deferred, &size);
    if (fd < 0)
        return NULL;
    /* Not populated: a lookup reads a few pages of it. */
    void *file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (file == MAP_FAILED)
        return NULL;
    struct cache_header header;
    struct index_cache_arrays arrays;
    struct module_data *data = NULL;
    if (!image_fits(deferred, file, size, &header, &arrays) || (data = take_slot()) == NULL) {
        munmap(file, size);
        return NULL;
    }
    *data = (struct module_data){ arrays.symbols, arrays.symbol_count, arrays.lines,
                                  arrays.line_count, arrays.strings, sizeof *data + size,
                                  (int)header.lines_truncated, (int)header.demangled,
                                  header.strings_bytes, header.name_bytes_read, 1,
                                  arrays.inlines, arrays.inline_count, arrays.inline_ranges,
                                  arrays.inline_range_count, NULL, 1 };
    return data;
}

const struct module_data *index_cache_deferred_map(struct index_cache_deferred *deferred)
{
    const struct module_data *data = atomic_load(&deferred->data);
    if (data != NULL || atomic_load(&deferred->refused))
        return data;
    data = map_checked(deferred);
    if (data == NULL) {
        if (atomic_exchange(&deferred->refused, 1) == 0)
            atomic_fetch_add(&refused_count, 1);
        return atomic_load(&deferred->data); /* another reader's, if it won */
    }
    const struct module_data *expected = NULL;
    if (!atomic_compare_exchange_strong(&deferred->data, &expected, data)) {
        munmap((void *)((const unsigned char *)data->symbols - sizeof(struct cache_header)),
               data->mapped_bytes - sizeof *data);
        return expected; /* its slot is not reused: a reserve slot is cheap */
    }
    return data;
}

const struct module_data *index_data_ready(const struct module_data *data)
{
    return data != NULL && data->deferred != NULL ? index_cache_deferred_map(data->deferred)
                                                  : data;
}
