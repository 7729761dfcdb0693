/* minidump_file.c: space taken at the end and written by position with
 * pwrite; memory read with memory_read (process_vm_readv; a maps lookup
 * under qemu-user), so that an unmapped page is an error and not a fault.
 * World: signal-safe (raw syscalls; the caller's scratch buffer). */
#define _GNU_SOURCE
#include "minidump_file.h"
#include "../base/memory_read.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096u

void minidump_file_init(struct minidump_file *file, int fd, char *scratch, size_t scratch_size)
{
    file->fd = fd;
    file->end = 0;
    file->error = 0;
    file->scratch = scratch;
    file->scratch_size = scratch_size;
}

int minidump_file_take(struct minidump_file *file, size_t size, uint32_t *rva)
{
    uint64_t start = (file->end + 7) & ~(uint64_t)7;
    if (start + size > UINT32_MAX)
        return -EFBIG;
    file->end = start + size;
    *rva = (uint32_t)start;
    return 0;
}

/* pwrite64 by its syscall: no cancellation point, errno left alone. */
int minidump_file_write(struct minidump_file *file, uint32_t rva, const void *data, size_t size)
{
    const char *bytes = data;
    uint64_t offset = rva;
    while (size > 0) {
        long written = syscall(SYS_pwrite64, file->fd, bytes, size, (off_t)offset);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0) {
            int error = written < 0 ? -errno : -EIO;
            if (file->error == 0)
                file->error = error;
            return error;
        }
        bytes += written;
        offset += (uint64_t)written;
        size -= (size_t)written;
    }
    return 0;
}

int minidump_file_append(struct minidump_file *file, const void *data, size_t size,
                         struct md_location *where)
{
    uint32_t rva;
    if (minidump_file_take(file, size, &rva) < 0)
        return -EFBIG;
    int result = minidump_file_write(file, rva, data, size);
    if (result == 0 && where != NULL)
        *where = (struct md_location){ (uint32_t)size, rva };
    return result;
}

/* One code point from UTF-8 at TEXT (LENGTH > 0 bytes); a malformed byte
 * is taken alone as U+FFFD. */
static uint32_t next_code_point(const unsigned char *text, size_t length, size_t *used)
{
    unsigned lead = text[0], extra = lead < 0x80 ? 0 : lead >= 0xf0 && lead < 0xf5 ? 3
                                               : lead >= 0xe0 ? 2 : lead >= 0xc2 ? 1 : 4;
    uint32_t value = extra == 0 ? lead : lead & (0x3fu >> extra);
    *used = 1;
    if (extra == 4 || extra >= length)
        return extra == 0 ? value : 0xfffd;
    for (unsigned i = 1; i <= extra; i++) {
        if ((text[i] & 0xc0) != 0x80)
            return 0xfffd;
        value = value << 6 | (text[i] & 0x3fu);
    }
    *used = extra + 1;
    return value;
}

static size_t utf16_units(const char *text, size_t length, uint16_t *out)
{
    size_t count = 0, used;
    for (size_t i = 0; i < length; i += used) {
        uint32_t code = next_code_point((const unsigned char *)text + i, length - i, &used);
        if (code >= 0x10000) {
            code -= 0x10000;
            if (out != NULL) {
                out[count] = (uint16_t)(0xd800 | (code >> 10));
                out[count + 1] = (uint16_t)(0xdc00 | (code & 0x3ff));
            }
            count += 2;
        } else {
            if (out != NULL)
                out[count] = (uint16_t)code;
            count++;
        }
    }
    return count;
}

/* In the scratch buffer: the length (two units), the text, a NUL. */
int minidump_file_append_string(struct minidump_file *file, const char *text, size_t length,
                                struct md_location *where)
{
    uint16_t *units = (uint16_t *)file->scratch;
    size_t capacity = file->scratch_size / 2 - 3;
    if (length > capacity)
        length = capacity; /* a byte of UTF-8 gives at most one unit */
    size_t count = utf16_units(text, length, units + 2);
    uint32_t bytes = (uint32_t)(count * 2);
    units[0] = (uint16_t)(bytes & 0xffff);
    units[1] = (uint16_t)(bytes >> 16);
    units[2 + count] = 0;
    return minidump_file_append(file, units, 4 + bytes + 2, where);
}

int minidump_read_memory(void *out, uintptr_t address, size_t size)
{
    return memory_read(out, address, size) == (ssize_t)size ? 0 : -EFAULT;
}

/* Page by page: a page that cannot be read becomes zeros. */
static size_t read_memory_or_zeros(char *out, uintptr_t address, size_t size)
{
    size_t readable = 0;
    while (size > 0) {
        size_t piece = PAGE - (address & (PAGE - 1));
        if (piece > size)
            piece = size;
        if (minidump_read_memory(out, address, piece) == 0) {
            readable += piece;
        } else {
            for (size_t i = 0; i < piece; i++)
                out[i] = 0;
        }
        out += piece;
        address += piece;
        size -= piece;
    }
    return readable;
}

int minidump_file_append_memory(struct minidump_file *file, uintptr_t address, size_t size,
                                struct md_location *where)
{
    size_t readable = 0;
    uint64_t saved_end = file->end;
    uint32_t rva;
    if (minidump_file_take(file, size, &rva) < 0)
        return -EFBIG;
    for (size_t done = 0; done < size;) {
        size_t piece = size - done < file->scratch_size ? size - done : file->scratch_size;
        readable += read_memory_or_zeros(file->scratch, address + done, piece);
        int result = minidump_file_write(file, rva + (uint32_t)done, file->scratch, piece);
        if (result < 0)
            return result;
        done += piece;
    }
    if (readable == 0) {
        file->end = saved_end; /* nothing of it: give the space back */
        return -EFAULT;
    }
    *where = (struct md_location){ (uint32_t)size, rva };
    return 0;
}

int minidump_file_append_path(struct minidump_file *file, const char *path,
                              struct md_location *where)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    uint32_t rva;
    uint64_t size = 0;
    int result = minidump_file_take(file, 0, &rva);
    while (result == 0) {
        ssize_t got = read(fd, file->scratch, file->scratch_size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            result = -errno;
        if (got <= 0)
            break;
        if (rva + size + (uint64_t)got > UINT32_MAX) {
            result = -EFBIG;
            break;
        }
        result = minidump_file_write(file, rva + (uint32_t)size, file->scratch, (size_t)got);
        if (result < 0)
            break;
        size += (uint64_t)got;
        file->end = rva + size;
    }
    close(fd);
    if (result == 0)
        *where = (struct md_location){ (uint32_t)size, rva };
    return result;
}

int minidump_file_finish(struct minidump_file *file)
{
    if (ftruncate(file->fd, (off_t)file->end) != 0)
        return -errno;
    return file->error;
}
