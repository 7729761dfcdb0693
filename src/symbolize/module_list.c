/* module_list.c: snapshot of the loaded modules through dl_iterate_phdr.
 * World: normal (dl_iterate_phdr takes the loader lock; malloc). */
#define _GNU_SOURCE
#include "module_list.h"
#include "../base/array_grow.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

struct collect_state {
    struct module_list *list;
    size_t capacity;
    uintptr_t vdso;
    int failed;
};

static void describe_segments(struct module_info *module, const struct dl_phdr_info *info)
{
    module->start = UINTPTR_MAX;
    module->end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *phdr = &info->dlpi_phdr[i];
        uintptr_t begin = info->dlpi_addr + phdr->p_vaddr;
        if (phdr->p_type == PT_LOAD) {
            if (begin < module->start)
                module->start = begin;
            if (begin + phdr->p_memsz > module->end)
                module->end = begin + phdr->p_memsz;
        } else if (phdr->p_type == PT_NOTE && module->build_id_length == 0) {
            module->build_id_length = build_id_from_notes(
                (const unsigned char *)begin, phdr->p_filesz, module->build_id);
        }
    }
}

/* The vdso has no file: its image in memory is a complete ELF file. */
static size_t memory_image_size(uintptr_t image)
{
    const ElfW(Ehdr) *ehdr = (const ElfW(Ehdr) *)image;
    return ehdr->e_shoff + (size_t)ehdr->e_shnum * ehdr->e_shentsize;
}

static int name_module(struct module_info *module, const struct dl_phdr_info *info,
                       int is_first, uintptr_t vdso)
{
    const char *name = info->dlpi_name;

    if (name[0] == '\0' && is_first) {
        module->is_main = 1;
        module->display_path = strdup(program_invocation_name);
        module->file_path = strdup("/proc/self/exe");
    } else if (vdso != 0 && module->start <= vdso && vdso < module->end) {
        module->display_path = strdup(name[0] ? name : "linux-vdso.so.1");
        module->file_path = strdup("");
        module->memory_image = (const void *)vdso;
        module->memory_size = memory_image_size(vdso);
    } else if (name[0] != '\0') {
        module->display_path = strdup(name);
        module->file_path = strdup(name);
    } else {
        return 1; /* nameless and not the program: nothing to say about it */
    }
    return module->display_path && module->file_path ? 0 : -ENOMEM;
}

static int collect(struct dl_phdr_info *info, size_t size, void *opaque)
{
    struct collect_state *state = opaque;
    struct module_list *list = state->list;
    (void)size;

    if (list->count == 0 && list->adds == 0) {
        list->adds = info->dlpi_adds;
        list->subs = info->dlpi_subs;
    }
    if (array_grow(&list->modules, &state->capacity, list->count, sizeof *list->modules, 32) < 0) {
        state->failed = 1;
        return 1;
    }
    struct module_info *module = &list->modules[list->count];
    memset(module, 0, sizeof *module);
    module->bias = info->dlpi_addr;
    describe_segments(module, info);
    if (module->end <= module->start)
        return 0;
    int named = name_module(module, info, list->count == 0, state->vdso);
    if (named < 0) {
        free(module->display_path);
        free(module->file_path);
        state->failed = 1;
        return 1;
    }
    if (named == 0)
        list->count++;
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct module_info *left = a, *right = b;
    return left->start < right->start ? -1 : left->start > right->start;
}

int module_list_read(struct module_list *list)
{
    struct collect_state state = { list, 0, getauxval(AT_SYSINFO_EHDR), 0 };

    memset(list, 0, sizeof *list);
    dl_iterate_phdr(collect, &state);
    if (state.failed) {
        module_list_free(list);
        return -ENOMEM;
    }
    qsort(list->modules, list->count, sizeof *list->modules, by_start);
    return 0;
}

void module_list_free(struct module_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->modules[i].display_path);
        free(list->modules[i].file_path);
    }
    free(list->modules);
    memset(list, 0, sizeof *list);
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *opaque)
{
    unsigned long long *counters = opaque;
    (void)size;
    counters[0] = info->dlpi_adds;
    counters[1] = info->dlpi_subs;
    return 1;
}

void module_list_counters(unsigned long long *adds, unsigned long long *subs)
{
    unsigned long long counters[2] = { 0, 0 };
    dl_iterate_phdr(read_counters, counters);
    *adds = counters[0];
    *subs = counters[1];
}
