/* index_light.c: may the index leave modules unread at load
 * (index_light.h)?
 * World: normal (dl_iterate_phdr takes the loader lock).
 *
 * The loader relocates most modules' dynamic entries in place (DT_STRTAB
 * then holds a runtime address) but not all (read-only dynamic sections,
 * the vDSO): an address outside the module is taken as link-time. */
#define _GNU_SOURCE
#include "index_light.h"

#include <link.h>
#include <string.h>

#define CORE_SONAME "libexecinfo_ex.so"
#define HOOKS_NAME "libexecinfo_ex_hooks.so"

struct scan {
    int linked;              /* a module lists the core library, or holds this code
                                without being it (the static library) */
    int hooks_loaded;
};

static int is_named(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    return strncmp(base, name, strlen(name)) == 0;
}

static const ElfW(Dyn) *dynamic_of(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return NULL;
}

static int in_module(const struct dl_phdr_info *info, uintptr_t address)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD && address - start < segment->p_memsz)
            return 1;
    }
    return 0;
}

/* Whether the module of INFO lists the core library in DT_NEEDED. */
static int needs_core(const struct dl_phdr_info *info)
{
    const ElfW(Dyn) *dynamic = dynamic_of(info);
    uintptr_t strings = 0;
    size_t strings_size = 0;
    for (const ElfW(Dyn) *entry = dynamic; entry != NULL && entry->d_tag != DT_NULL; entry++) {
        if (entry->d_tag == DT_STRTAB)
            strings = entry->d_un.d_ptr;
        else if (entry->d_tag == DT_STRSZ)
            strings_size = entry->d_un.d_val;
    }
    if (strings == 0)
        return 0;
    if (!in_module(info, strings))
        strings += info->dlpi_addr;
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++)
        if (entry->d_tag == DT_NEEDED && entry->d_un.d_val < strings_size &&
            is_named((const char *)(strings + entry->d_un.d_val), CORE_SONAME) &&
            !is_named((const char *)(strings + entry->d_un.d_val), HOOKS_NAME))
            return 1;
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *opaque)
{
    struct scan *scan = opaque;
    (void)size;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    int is_hooks = is_named(name, HOOKS_NAME);
    scan->hooks_loaded |= is_hooks;
    if (in_module(info, (uintptr_t)index_light_allowed) && !is_named(name, CORE_SONAME))
        scan->linked = 1;
    if (!is_hooks && info->dlpi_phnum > 0 && needs_core(info))
        scan->linked = 1;
    return 0;
}

int index_light_allowed(int heap)
{
    struct scan scan = { 0, 0 };
    dl_iterate_phdr(visit, &scan);
    return !scan.linked && !(scan.hooks_loaded && heap != 0);
}
