/* debug_file.c: separate debug files, by build-id and by .gnu_debuglink.
 * World: normal (libelf, malloc, open).
 * The debuglink CRC is not checked: the build-id comparison covers files
 * that have one, and a wrong debug file only costs wrong names. */
#define _GNU_SOURCE
#include "debug_file.h"
#include "debug_roots.h"
#include "file_probes.h"
#include "module_list.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The next root of the list at *CURSOR into ROOT (PATH_MAX bytes);
 * returns 0 at the end. Empty entries are skipped. */
static int next_root(const char **cursor, char *root)
{
    while (**cursor == ':')
        ++*cursor;
    size_t length = strcspn(*cursor, ":");
    if (length == 0 || length >= PATH_MAX)
        return 0;
    memcpy(root, *cursor, length);
    root[length] = '\0';
    *cursor += length;
    return 1;
}

static unsigned copy_build_id(const Elf_Data *data, unsigned char *id, size_t capacity)
{
    unsigned char found[MODULE_BUILD_ID_MAX];
    if (data == NULL || data->d_buf == NULL)
        return 0;
    unsigned length = build_id_from_notes(data->d_buf, data->d_size, found);
    if (length == 0 || length > capacity)
        return 0;
    memcpy(id, found, length);
    return length;
}

/* From the note sections, or, in a file without section headers, from
 * the PT_NOTE segments (where the loaded module's id was read). */
unsigned elf_file_build_id(Elf *elf, unsigned char *id, size_t capacity)
{
    Elf_Scn *section = NULL;
    size_t headers;
    unsigned length;

    while ((section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == NULL || header.sh_type != SHT_NOTE)
            continue;
        if ((length = copy_build_id(elf_getdata(section, NULL), id, capacity)) > 0)
            return length;
    }
    if (elf_getshdrnum(elf, &headers) == 0 && headers > 0)
        return 0;
    if (elf_getphdrnum(elf, &headers) != 0)
        return 0;
    for (size_t i = 0; i < headers; i++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)i, &header) == NULL || header.p_type != PT_NOTE)
            continue;
        Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)header.p_offset, header.p_filesz,
                                              ELF_T_BYTE);
        if ((length = copy_build_id(data, id, capacity)) > 0)
            return length;
    }
    return 0;
}

int elf_file_open(const char *path)
{
    struct stat named, opened;

    /* stat first: opening some devices has effects (a watchdog arms). */
    if (stat(path, &named) < 0)
        return -1;
    if (!S_ISREG(named.st_mode)) {
        errno = EINVAL;
        return -1;
    }
    /* O_NONBLOCK: if it was swapped for a FIFO since, the open returns. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    /* Regular again, but not necessarily the same inode: valgrind opens
     * the program for /proc/self/exe, whose stat is valgrind's own. */
    if (fstat(fd, &opened) < 0 || !S_ISREG(opened.st_mode) || fcntl(fd, F_SETFL, 0) < 0) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* PROBES records what was found at PATH, taken or not: a cached copy of
 * the module's data is valid while every candidate is as it was. */
static Elf *open_candidate(const char *path, const unsigned char *build_id,
                           unsigned build_id_length, int *fd_out, struct file_probes *probes)
{
    struct stat found;
    int fd = elf_file_open(path);
    if (fd < 0 || fstat(fd, &found) != 0) {
        file_probes_add_file(probes, path, NULL);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    file_probes_add_file(probes, path, &found);
    errno = 0;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF) {
        unsigned char id[MODULE_BUILD_ID_MAX];
        unsigned length = elf_file_build_id(elf, id, sizeof id);
        if (build_id_length == 0 || length == 0 ||
            (length == build_id_length && memcmp(id, build_id, length) == 0)) {
            *fd_out = fd;
            return elf;
        }
    }
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return NULL;
}

static Elf *open_by_build_id_under(const char *root, const unsigned char *id, unsigned length,
                                   int *fd, struct file_probes *probes)
{
    char path[PATH_MAX];
    int at = snprintf(path, sizeof path, "%s/.build-id/%02x/", root, id[0]);
    for (unsigned i = 1; i < length && at > 0 && (size_t)at < sizeof path - 8; i++)
        at += snprintf(path + at, sizeof path - (size_t)at, "%02x", id[i]);
    if (at <= 0 || (size_t)at >= sizeof path - 8)
        return NULL;
    strcpy(path + at, ".debug");
    return open_candidate(path, id, length, fd, probes);
}

static Elf *open_by_build_id(const char *roots, const unsigned char *id, unsigned length,
                             int *fd, struct file_probes *probes)
{
    char root[PATH_MAX];
    if (length < 2)
        return NULL;
    for (const char *cursor = roots; next_root(&cursor, root);) {
        Elf *found = open_by_build_id_under(root, id, length, fd, probes);
        if (found != NULL || errno == ENOMEM)
            return found;
    }
    return NULL;
}

static const char *debuglink_name(Elf *elf)
{
    size_t strings_index;
    Elf_Scn *section = NULL;

    if (elf_getshdrstrndx(elf, &strings_index) != 0)
        return NULL;
    while ((section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == NULL)
            continue;
        const char *name = elf_strptr(elf, strings_index, header.sh_name);
        if (name == NULL || strcmp(name, ".gnu_debuglink") != 0)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        if (data == NULL || data->d_buf == NULL || data->d_size < 2)
            return NULL;
        /* The name is NUL-terminated inside the section, or not usable. */
        if (memchr(data->d_buf, '\0', data->d_size) == NULL)
            return NULL;
        return data->d_buf;
    }
    return NULL;
}

static Elf *open_by_debuglink(Elf *elf, const char *module_path, const char *roots,
                              const unsigned char *id, unsigned length, int *fd,
                              struct file_probes *probes)
{
    const char *link = debuglink_name(elf);
    char real[PATH_MAX], candidate[PATH_MAX], root[PATH_MAX];

    if (link == NULL || strchr(link, '/') != NULL || realpath(module_path, real) == NULL)
        return NULL;
    char *slash = strrchr(real, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    const char *formats[] = { "%s/%s", "%s/.debug/%s", NULL };
    for (int i = 0; formats[i] != NULL; i++) {
        int n = snprintf(candidate, sizeof candidate, formats[i], real, link);
        if (n <= 0 || (size_t)n >= sizeof candidate || strcmp(candidate, module_path) == 0)
            continue;
        Elf *found = open_candidate(candidate, id, length, fd, probes);
        if (found != NULL || errno == ENOMEM)
            return found;
    }
    for (const char *cursor = roots; next_root(&cursor, root);) {
        int n = snprintf(candidate, sizeof candidate, "%s%s/%s", root, real, link);
        if (n <= 0 || (size_t)n >= sizeof candidate)
            continue;
        Elf *found = open_candidate(candidate, id, length, fd, probes);
        if (found != NULL || errno == ENOMEM)
            return found;
    }
    return NULL;
}

Elf *debug_file_open(Elf *elf, const char *path, const unsigned char *build_id,
                     unsigned build_id_length, int *fd, struct file_probes *probes)
{
    char roots[DEBUG_FILE_ROOTS_MAX];
    debug_file_roots(roots, sizeof roots);
    Elf *found = open_by_build_id(roots, build_id, build_id_length, fd, probes);
    if (found == NULL && errno != ENOMEM) /* out of memory: no other candidate */
        found = open_by_debuglink(elf, path, roots, build_id, build_id_length, fd, probes);
    return found;
}
