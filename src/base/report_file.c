/* report_file.c: the one way a report file is opened, by the fatal handler
 * and by the heap hook layer's heap report.
 * World: signal-safe (open, fstat, close, and fcntl through syscall()).
 *
 * A report file is only ever a regular file. Without O_NONBLOCK, open()
 * of a FIFO waits for a reader, and a device's open may wait too: inside
 * a crash handler (or inside free()) that is a hang, not a report. */
#define _GNU_SOURCE
#include "report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int is_acceptable(int fd, int ours_only)
{
    struct stat status;
    if (fstat(fd, &status) != 0)
        return -errno;
    if (!S_ISREG(status.st_mode))
        return -EINVAL;
    if (ours_only && (status.st_uid != geteuid() || status.st_nlink != 1))
        return -EPERM;
    return 0;
}

/* fcntl(2) by its syscall: the same call, with no wrapper of libc's. */
static int clear_nonblocking(int fd)
{
    long flags = syscall(SYS_fcntl, fd, F_GETFL);
    if (flags < 0 || syscall(SYS_fcntl, fd, F_SETFL, flags & ~(long)O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

int report_file_open(const char *path, int flags, int ours_only)
{
    int saved_errno = errno;
    int fd = open(path, flags | O_NONBLOCK, 0600);
    int result = fd >= 0 ? 0 : -errno;
    if (result == 0)
        result = is_acceptable(fd, ours_only);
    if (result == 0)
        result = clear_nonblocking(fd);
    if (result != 0 && fd >= 0)
        close(fd);
    errno = saved_errno;
    return result == 0 ? fd : result;
}
