/* maps_fallback.c: name an address the index does not hold yet, from
 * /proc/self/maps (dladdr and dl_iterate_phdr would take the loader lock).
 * World: signal-safe. */
#define _GNU_SOURCE
#include "maps_fallback.h"
#include "../base/maps_reader.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>

static int is_elf_image(uintptr_t start)
{
    return memcmp((const void *)start, ELFMAG, SELFMAG) == 0;
}

/* The load bias of an ELF image whose first page is mapped at START. */
static uintptr_t bias_from_image(uintptr_t start)
{
    const ElfW(Ehdr) *ehdr = (const ElfW(Ehdr) *)start;
    if (!is_elf_image(start) || ehdr->e_phoff > 4096 - sizeof(ElfW(Phdr)))
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
    char *path;
    size_t capacity;
    uintptr_t *bias;
};

static void copy_path(char *to, size_t capacity, const char *from)
{
    size_t length = strlen(from);
    if (length >= capacity)
        length = capacity - 1;
    memcpy(to, from, length);
    to[length] = '\0';
}

static int visit(const struct maps_entry *entry, void *context)
{
    struct search *search = context;
    if (entry->path[0] != '/')
        return 0;
    if (entry->offset == 0) {
        copy_path(search->first_path, sizeof search->first_path, entry->path);
        search->first_start = entry->start;
        search->first_readable = entry->readable;
    }
    if (search->address < entry->start || search->address >= entry->end)
        return 0;
    /* Only the code of an ELF module, as a module loaded since the index
     * was built: data, a mapped file, JIT code in a memfd are no module's
     * (glibc's dladdr names none of them either). */
    if (!entry->executable || !search->first_readable ||
        strncmp(search->first_path, entry->path, sizeof search->first_path - 1) != 0 ||
        !is_elf_image(search->first_start))
        return -1;
    copy_path(search->path, search->capacity, entry->path);
    *search->bias = bias_from_image(search->first_start);
    return 1;
}

int maps_fallback_find(uintptr_t address, char *path, size_t capacity, uintptr_t *bias)
{
    struct search search = { .address = address, .path = path, .capacity = capacity,
                             .bias = bias };
    if (capacity == 0)
        return -ENOENT;
    return maps_for_each(visit, &search) == 1 ? 0 : -ENOENT;
}
