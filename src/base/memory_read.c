/* memory_read.c: copy memory that may not be mapped, without faulting.
 * World: signal-safe (process_vm_readv, open/read of /proc/self/maps).
 *
 * process_vm_readv fails instead of faulting, so a bad pointer costs a
 * syscall, not a second fault inside a handler. qemu-user 7.2 does not
 * implement it (ENOSYS, docs/DECISIONS.md): there, and only there, the
 * address's mapping is looked up in /proc/self/maps (which qemu emulates
 * for the guest) and read directly when it is readable. Any other refusal
 * keeps meaning "cannot tell", as before. */
#define _GNU_SOURCE
#include "memory_read.h"
#include "maps_reader.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static ssize_t read_after_lookup(void *out, uintptr_t address, size_t length)
{
    struct maps_entry entry;
    if (maps_find(address, &entry) < 0 || !entry.readable)
        return -1;
    size_t available = entry.end - address;
    size_t copied = length < available ? length : available;
    memcpy(out, (const void *)address, copied);
    return (ssize_t)copied;
}

ssize_t memory_read(void *out, uintptr_t address, size_t length)
{
    struct iovec local = { out, length }, remote = { (void *)address, length };
    int saved_errno = errno;
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got < 0 && errno == ENOSYS)
        got = read_after_lookup(out, address, length);
    errno = saved_errno;
    return got > 0 ? got : -1;
}
