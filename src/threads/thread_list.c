/* thread_list.c: list the threads of this process, from /proc/self/task.
 * World: signal-safe (open, the getdents64 syscall, close; a stack
 * buffer; no opendir, which mallocs).
 *
 * A vfork child's /proc/self is the child: it lists only itself, which
 * is what it may report (its parent is suspended and not its to stop). */
#define _GNU_SOURCE
#include "thread_list.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static pid_t parse_tid(const char *name)
{
    pid_t tid = 0;
    if (*name == '\0')
        return 0;
    for (; *name != '\0'; name++) {
        if (*name < '0' || *name > '9' || tid > 100000000)
            return 0; /* ".", "..", or not a tid */
        tid = tid * 10 + (*name - '0');
    }
    return tid;
}

/* Keep TIDS the COUNT smallest seen so far, ascending (the kernel lists
 * them nearly in order, so this is close to linear). */
static int keep_smallest(pid_t *tids, int count, int capacity, pid_t tid)
{
    if (count == capacity && (capacity == 0 || tid > tids[count - 1]))
        return count;
    int at = count < capacity ? count++ : count - 1;
    while (at > 0 && tids[at - 1] > tid) {
        tids[at] = tids[at - 1];
        at--;
    }
    tids[at] = tid;
    return count;
}

int thread_list_tids(pid_t *tids, int capacity, pid_t skip, int *seen)
{
    char buffer[4096] __attribute__((aligned(8)));
    int count = 0;
    *seen = 0;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        long length = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (length <= 0) {
            int error = length < 0 ? -errno : 0;
            close(fd);
            return error < 0 && count == 0 ? error : count;
        }
        for (long at = 0; at < length;) {
            const struct linux_dirent64 *entry = (const void *)(buffer + at);
            at += entry->d_reclen;
            pid_t tid = parse_tid(entry->d_name);
            if (tid <= 0)
                continue;
            ++*seen;
            if (tid != skip)
                count = keep_smallest(tids, count, capacity, tid);
        }
    }
}
