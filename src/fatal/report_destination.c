/* report_destination.c: open the report file (report=PATH, %p expanded)
 * or take stderr.
 * World: signal-safe (report_file_open, fstat).
 *
 * The first report of a process creates the file, never over an existing
 * one unless overwrite=1. Every later one of the same process (a dump,
 * then the crash) is appended to that same file: the file it created,
 * found by device and inode, so that a file put in its place is still
 * refused. An existing file is written only if it is plainly ours (a
 * regular file we own with no other name: report_file_open checks), so
 * that report=/some/log with overwrite=1 cannot be turned, by a hard link,
 * into a write over someone's file. What cannot be opened sends the report
 * to stderr: a report on stderr beats none. */
#define _GNU_SOURCE
#include "report_destination.h"
#include "../base/path_pattern.h"
#include "../base/report_file.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    atomic_int pid;             /* the process that created it, 0: none */
    dev_t device;
    ino_t inode;
} created;

static int is_the_created_file(int fd)
{
    struct stat status;
    return fstat(fd, &status) == 0 && status.st_dev == created.device &&
           status.st_ino == created.inode;
}

static void remember_created(int fd)
{
    struct stat status;
    if (fstat(fd, &status) != 0)
        return;
    created.device = status.st_dev;
    created.inode = status.st_ino;
    atomic_store(&created.pid, getpid());
}

/* A later report of the process that created the file: appended. */
static int open_created(const char *path)
{
    int fd = report_file_open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 1);
    if (fd >= 0 && !is_the_created_file(fd)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int open_first(const char *path, int overwrite)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_APPEND;
    if (!overwrite)
        flags |= O_EXCL;
    int fd = report_file_open(path, flags, overwrite);
    if (fd >= 0 && overwrite && (ftruncate(fd, 0) != 0 || fchmod(fd, 0600) != 0)) {
        close(fd);
        return -1;
    }
    if (fd >= 0)
        remember_created(fd);
    return fd;
}

void report_destination_open(struct report_destination *destination,
                             const struct options *options)
{
    destination->fd = STDERR_FILENO;
    destination->is_file = 0;
    destination->path[0] = '\0';
    if (options->report[0] == '\0' ||
        path_pattern_expand(options->report, getpid(), destination->path,
                            sizeof destination->path) < 0)
        return;
    int fd = atomic_load(&created.pid) == getpid() ? open_created(destination->path)
                                                     : open_first(destination->path,
                                                                  options->overwrite);
    if (fd >= 0) {
        destination->fd = fd;
        destination->is_file = 1;
    }
}

/* Once a write to the report file fails (a full disk, RLIMIT_FSIZE), the
 * rest of the report goes to stderr, after this line. */
static void announce_fallback(int fd, int error, const void *path)
{
    char buffer[OPTIONS_PATH_MAX + 160];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_string(&out, "*** execinfo_ex: writing the report to ");
    text_out_string(&out, path);
    text_out_string(&out, " failed (errno ");
    text_out_decimal(&out, (uint64_t)(error < 0 ? -error : error));
    text_out_string(&out, "); the rest of the report follows\n");
    text_out_flush(&out);
}

void report_destination_fall_back(struct report_destination *destination, struct text_out *out)
{
    if (destination->is_file)
        text_out_set_fallback(out, STDERR_FILENO, announce_fallback, destination->path);
}

void report_destination_close(struct report_destination *destination)
{
    if (destination->is_file)
        close(destination->fd);
    destination->is_file = 0;
}
