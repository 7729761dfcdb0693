/* maps_fallback.c: /proc/self/maps parsed with raw reads.
 * World: signal-safe. dladdr and dl_iterate_phdr would take the loader
 * lock; the kernel's view of the mappings needs none. Used for modules
 * loaded after the index was built. */
#define _GNU_SOURCE
#include "maps_fallback.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

struct maps_line {
    uintptr_t start, end, offset;
    int readable;
    const char *path;   /* NUL-terminated, in the line buffer; "" if none */
};

static const char *parse_hex(const char *at, uintptr_t *value)
{
    uintptr_t result = 0;
    int digits = 0;
    for (;; at++, digits++) {
        char c = *at;
        if (c >= '0' && c <= '9') result = result * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f') result = result * 16 + (uintptr_t)(c - 'a' + 10);
        else break;
    }
    *value = result;
    return digits ? at : NULL;
}

static const char *skip_field(const char *at)
{
    while (*at == ' ')
        at++;
    while (*at != ' ' && *at != '\0')
        at++;
    return at;
}

/* "start-end perms offset dev inode   path" */
static int parse_line(char *text, struct maps_line *line)
{
    const char *at = parse_hex(text, &line->start);
    if (at == NULL || *at != '-' || (at = parse_hex(at + 1, &line->end)) == NULL || *at != ' ')
        return -1;
    line->readable = at[1] == 'r';
    at = skip_field(at);
    while (*at == ' ')
        at++;
    if ((at = parse_hex(at, &line->offset)) == NULL)
        return -1;
    at = skip_field(skip_field(at));
    while (*at == ' ')
        at++;
    line->path = at;
    char *deleted = strstr(text, " (deleted)");
    if (deleted != NULL && deleted[10] == '\0')
        *deleted = '\0';
    return 0;
}

/* The load bias of an ELF image whose first page is mapped at START. */
static uintptr_t bias_from_image(uintptr_t start)
{
    const ElfW(Ehdr) *ehdr = (const ElfW(Ehdr) *)start;
    if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_phoff > 4096 - sizeof(ElfW(Phdr)))
        return start;
    const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)(start + ehdr->e_phoff);
    for (int i = 0; i < ehdr->e_phnum && ehdr->e_phoff + (i + 1) * sizeof *phdr <= 4096; i++)
        if (phdr[i].p_type == PT_LOAD)
            return start - (phdr[i].p_vaddr & ~(uintptr_t)4095);
    return start;
}

struct search {
    uintptr_t address;
    char first_path[512];   /* the file of the last offset-0 mapping */
    uintptr_t first_start;
    int first_readable;
    int found;
};

static void examine(struct search *search, char *text, char *path, size_t capacity, uintptr_t *bias)
{
    struct maps_line line;
    if (parse_line(text, &line) < 0 || line.path[0] != '/')
        return;
    if (line.offset == 0) {
        size_t length = strlen(line.path);
        if (length >= sizeof search->first_path)
            length = sizeof search->first_path - 1;
        memcpy(search->first_path, line.path, length);
        search->first_path[length] = '\0';
        search->first_start = line.start;
        search->first_readable = line.readable;
    }
    if (search->address < line.start || search->address >= line.end)
        return;
    size_t length = strlen(line.path);
    if (capacity == 0)
        return;
    if (length >= capacity)
        length = capacity - 1;
    memcpy(path, line.path, length);
    path[length] = '\0';
    if (strncmp(search->first_path, line.path, sizeof search->first_path - 1) == 0)
        *bias = search->first_readable ? bias_from_image(search->first_start) : search->first_start;
    else
        *bias = line.start - line.offset;
    search->found = 1;
}

int maps_fallback_find(uintptr_t address, char *path, size_t capacity, uintptr_t *bias)
{
    int saved_errno = errno;
    struct search search = { .address = address };
    char chunk[1024], line[1024];
    size_t line_length = 0;
    int overlong = 0;
    ssize_t got;

    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errno = saved_errno;
        return -ENOENT;
    }
    while (!search.found && (got = read(fd, chunk, sizeof chunk)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (ssize_t i = 0; i < got && !search.found; i++) {
            if (chunk[i] != '\n') {
                if (line_length < sizeof line - 1)
                    line[line_length++] = chunk[i];
                else
                    overlong = 1;
                continue;
            }
            line[line_length] = '\0';
            if (!overlong)
                examine(&search, line, path, capacity, bias);
            line_length = 0;
            overlong = 0;
        }
    }
    close(fd);
    errno = saved_errno;
    return search.found ? 0 : -ENOENT;
}
