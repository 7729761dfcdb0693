/* minidump_file_id.c: the identifier Breakpad gives an ELF file without
 * a build-id: XOR of the first page of .text, read with pread from the
 * file (section headers are not in memory).
 * World: signal-safe (open, pread by its syscall, close; stack buffers). */
#define _GNU_SOURCE
#include "minidump_file_id.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TEXT_BYTES (MINIDUMP_FILE_ID_SCRATCH - MD_GUID_SIZE)

static int read_at(int fd, void *out, size_t size, uint64_t offset)
{
    char *bytes = out;
    while (size > 0) {
        long got = syscall(SYS_pread64, fd, bytes, size, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            break; /* past the end: zeros, as the bytes after a mapping's end */
        bytes += got;
        offset += (uint64_t)got;
        size -= (size_t)got;
    }
    memset(bytes, 0, size);
    return 0;
}

/* The section named NAME of type TYPE: its offset and size. */
static int find_section(int fd, const Elf64_Ehdr *header, const char *name, uint32_t type,
                        uint64_t *offset, uint64_t *size)
{
    Elf64_Shdr names, section;
    size_t name_length = strlen(name) + 1;
    char candidate[16];
    if (header->e_shoff == 0 || header->e_shstrndx >= header->e_shnum || name_length > sizeof candidate)
        return -ENOENT;
    int result = read_at(fd, &names, sizeof names,
                         header->e_shoff + (uint64_t)header->e_shstrndx * sizeof names);
    for (unsigned i = 0; result == 0 && i < header->e_shnum; i++) {
        result = read_at(fd, &section, sizeof section, header->e_shoff + (uint64_t)i * sizeof section);
        if (result < 0 || section.sh_type != type || section.sh_name >= names.sh_size)
            continue;
        result = read_at(fd, candidate, name_length, names.sh_offset + section.sh_name);
        if (result == 0 && memcmp(candidate, name, name_length) == 0) {
            *offset = section.sh_offset;
            *size = section.sh_size;
            return 0;
        }
    }
    return result < 0 ? result : -ENOENT;
}

static int hash_text(int fd, uint8_t id[MD_GUID_SIZE], uint8_t *text)
{
    Elf64_Ehdr header;
    uint64_t offset, size;
    int result = read_at(fd, &header, sizeof header, 0);
    if (result < 0)
        return result;
    if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
        return -ENOEXEC;
    result = find_section(fd, &header, ".text", SHT_PROGBITS, &offset, &size);
    if (result < 0 || size == 0)
        return result < 0 ? result : -ENOENT;
    size_t hashed = size < TEXT_BYTES ? (size_t)size : TEXT_BYTES;
    /* Breakpad's loop takes whole 16-byte blocks: the last one reads on
     * past the section's end, into whatever the file holds there. */
    size_t blocks = (hashed + MD_GUID_SIZE - 1) / MD_GUID_SIZE;
    result = read_at(fd, text, blocks * MD_GUID_SIZE, offset);
    if (result < 0)
        return result;
    memset(id, 0, MD_GUID_SIZE);
    for (size_t block = 0; block < blocks; block++)
        for (unsigned i = 0; i < MD_GUID_SIZE; i++)
            id[i] ^= text[block * MD_GUID_SIZE + i];
    return 0;
}

int minidump_file_id_from_text(const char *path, uint8_t id[MD_GUID_SIZE], uint8_t *scratch)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    int result = hash_text(fd, id, scratch);
    close(fd);
    return result;
}
