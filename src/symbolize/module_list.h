/* module_list.h: the modules loaded now, as dl_iterate_phdr reports them. */
#ifndef EXECINFO_EX_MODULE_LIST_H
#define EXECINFO_EX_MODULE_LIST_H

#include <stddef.h>
#include <stdint.h>

#define MODULE_BUILD_ID_MAX 32

struct module_info {
    uintptr_t bias;           /* load bias (dlpi_addr) */
    uintptr_t start, end;     /* runtime span of the PT_LOAD segments */
    char *display_path;       /* what glibc prints: argv[0] for the program */
    char *file_path;          /* what to open: /proc/self/exe for the program */
    const char *key_path;     /* the path the index cache's key holds, NULL: file_path
                                 (the second stage opens /proc/PID/exe for the
                                 crashed program, whose key says /proc/self/exe) */
    const void *memory_image; /* the ELF image in memory (vdso), else NULL */
    size_t memory_size;
    int is_main;
    unsigned char build_id[MODULE_BUILD_ID_MAX];
    unsigned build_id_length; /* from the PT_NOTE in memory; 0 if none */
};

struct module_list {
    struct module_info *modules;
    size_t count;
    unsigned long long adds, subs; /* dl_iterate_phdr's change counters */
};

/* Fill LIST with the loaded modules, sorted by start. Normal world (takes
 * the loader lock). Returns 0 or -ENOMEM. */
int module_list_read(struct module_list *list);
void module_list_free(struct module_list *list);

/* The loader's change counters, cheaply. Normal world. */
void module_list_counters(unsigned long long *adds, unsigned long long *subs);

/* Build-id from a note area in memory (PT_NOTE or SHT_NOTE contents).
 * Returns its length (0 if none), copied into ID. Signal-safe. */
unsigned build_id_from_notes(const unsigned char *notes, size_t size,
                             unsigned char id[MODULE_BUILD_ID_MAX]);

#endif
