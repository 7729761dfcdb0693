/* eh_frame_locate.c: the .eh_frame of a program that has no .eh_frame_hdr.
 * World: signal-safe (open, pread through syscall(), close; atomics).
 *
 * gcc -static links without --eh-frame-hdr, so a fully static program has
 * no PT_GNU_EH_FRAME and static glibc's _dl_find_object gives no table:
 * libgcc's own unwinder finds .eh_frame through crtbeginT.o's
 * __register_frame_info, a list private to libgcc. What is left is the
 * section header table of the file, which is not mapped: it is read here
 * from /proc/self/exe (always the running file's inode, even if the path
 * was replaced). libelf is not used because it allocates, and this may be
 * the first call of a signal handler. The answer is kept for the life of
 * the process. */
#define _GNU_SOURCE
#include "eh_frame_locate.h"

#include <elf.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SECTIONS_MAX 4096

enum { UNKNOWN, FOUND, ABSENT };

static atomic_int located = UNKNOWN;
static _Atomic uintptr_t section_address, section_size;

static int read_at(int fd, void *buffer, size_t size, uint64_t offset)
{
    long got = syscall(SYS_pread64, fd, buffer, size, (long)offset);
    return got == (long)size ? 0 : -1;
}

static int is_named(int fd, const Elf64_Shdr *names, uint32_t name, const char *wanted)
{
    char found[16];
    size_t size = strlen(wanted) + 1;
    if (name >= names->sh_size || size > names->sh_size - name ||
        read_at(fd, found, size, names->sh_offset + name) < 0)
        return 0;
    return memcmp(found, wanted, size) == 0;
}

/* The link-time address and size of FD's .eh_frame, or -1. */
static int find_in_file(int fd, const Elf64_Ehdr *mapped, struct eh_frame_section *out)
{
    Elf64_Ehdr file;
    Elf64_Shdr names, section;

    if (read_at(fd, &file, sizeof file, 0) < 0 || memcmp(&file, mapped, sizeof file) != 0 ||
        memcmp(file.e_ident, ELFMAG, SELFMAG) != 0 ||
        file.e_ident[EI_CLASS] != ELFCLASS64 || file.e_shentsize != sizeof section ||
        file.e_shnum > SECTIONS_MAX || file.e_shstrndx >= file.e_shnum ||
        read_at(fd, &names, sizeof names, file.e_shoff + (uint64_t)file.e_shstrndx * sizeof names) < 0)
        return -1;
    for (unsigned i = 1; i < file.e_shnum; i++) {
        if (read_at(fd, &section, sizeof section, file.e_shoff + (uint64_t)i * sizeof section) < 0)
            return -1;
        if (section.sh_type == SHT_PROGBITS && (section.sh_flags & SHF_ALLOC) &&
            is_named(fd, &names, section.sh_name, ".eh_frame")) {
            *out = (struct eh_frame_section){ section.sh_addr, section.sh_size };
            return 0;
        }
    }
    return -1;
}

int eh_frame_locate_program(const Elf64_Ehdr *mapped, struct eh_frame_section *out)
{
    int state = atomic_load_explicit(&located, memory_order_acquire);
    if (state == UNKNOWN) {
        struct eh_frame_section section;
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1; /* out of descriptors, no /proc: try again next time */
        int found = find_in_file(fd, mapped, &section) == 0;
        close(fd);
        /* Threads that race here store the same values. */
        if (found) {
            atomic_store_explicit(&section_address, section.address, memory_order_relaxed);
            atomic_store_explicit(&section_size, section.size, memory_order_relaxed);
        }
        state = found ? FOUND : ABSENT;
        atomic_store_explicit(&located, state, memory_order_release);
    }
    if (state != FOUND)
        return -1;
    out->address = atomic_load_explicit(&section_address, memory_order_relaxed);
    out->size = atomic_load_explicit(&section_size, memory_order_relaxed);
    return 0;
}
