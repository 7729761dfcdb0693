/* index_at_crash.c: the snapshot the first reader builds when the load
 * left the index to it (index_at_crash.h).
 * World: signal-safe (static memory; the loader's list read with
 * process_vm_readv; stat, fstatat and open of the module files, the
 * cache directory and its files).
 *
 * Why (issue 26): a process where the library is only preloaded (handler=1
 * everywhere, the hooks library with heap=0) crashes almost never, and
 * listing its modules and finding their cache files at load cost about a
 * third of what the library added to it. So the load only records where
 * to look, and the first reader that finds no snapshot (the crash
 * handler, a signal-safe call such as backtrace_symbols_fd) lists the
 * modules itself, and names each one's cache file exactly as a load
 * would (index_cache_key.c): a warm crash reads the same files, a module
 * without one is named from its file and by the second stage, as an
 * unread module of a load was. The first normal call that names frames
 * builds the whole index as before and replaces this snapshot, which is
 * static and never unmapped.
 *
 * Not dl_iterate_phdr, which takes the loader's lock (held by a crash
 * inside dlopen): the loader's own list, _r_debug's, read with
 * process_vm_readv, since a heap overrun may have damaged a dlopen'd
 * module's link_map; a read that fails ends the list there. A module's program
 * headers are its ELF header's, at its load address, checked against the
 * dynamic section the loader gives; the program's are AT_PHDR's. */
#define _GNU_SOURCE
#include "index_at_crash.h"
#include "index_cache_deferred.h"
#include "index_cache_key.h"
#include "line_mode.h"
#include "module_data.h"
#include "module_list.h"
#include "../base/maps_reader.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MODULES_MAX 512
#define PATH_BYTES (64 * 1024)
#define NAME_MAX_BYTES 4096
#define HEADERS_MAX 64
#define NOTES_MAX 4096

static const struct index_at_crash_setup *setup;
static atomic_int tried;

/* Untouched until a build: .bss costs no page before. */
static union {
    struct index_snapshot snapshot;
    unsigned char bytes[sizeof(struct index_snapshot) + MODULES_MAX * sizeof(struct index_module)];
} storage;
static struct module_info infos[MODULES_MAX];
static char paths[PATH_BYTES];
static size_t paths_used;
/* The build's scratch, static too: a signal-safe call must fit in 8 KiB
 * of stack (a program's own alternate stack may be no larger), and the
 * build runs once. */
static char name[NAME_MAX_BYTES];
static ElfW(Phdr) headers[HEADERS_MAX];
static unsigned char notes[NOTES_MAX];
static union {
    ElfW(Ehdr) header;
    unsigned char bytes[1024];
} start;
static struct placeholder {
    struct module_data data;
    struct index_cache_deferred deferred;
} placeholders[MODULES_MAX];

static pid_t self; /* getpid() once a build, not once a read */

/* LENGTH bytes at ADDRESS, or -1: process_vm_readv, which fails where a
 * read would fault (a damaged link_map). Where it is refused (a sandbox's
 * seccomp filter, qemu-user's ENOSYS), memory that /proc/self/maps shows
 * readable is read directly: the loader's own list, which a load would
 * have read with dl_iterate_phdr, is worth a maps read per step there. */
static int read_exact(void *out, uintptr_t address, size_t length)
{
    struct iovec local = { out, length }, remote = { (void *)address, length };
    struct maps_entry entry;
    if (process_vm_readv(self, &local, 1, &remote, 1, 0) == (ssize_t)length)
        return 0;
    if (maps_find(address, &entry) < 0 || !entry.readable || entry.end - address < length)
        return -1;
    memcpy(out, (const void *)address, length);
    return 0;
}

/* A copy of TEXT in the path store, or NULL when it is full. */
static char *keep_path(const char *text)
{
    size_t length = strlen(text) + 1;
    if (length > PATH_BYTES - paths_used)
        return NULL;
    char *kept = memcpy(paths + paths_used, text, length);
    paths_used += length;
    return kept;
}

/* The NUL-terminated string at ADDRESS into OUT (CAPACITY); -1 if it
 * cannot be read or does not end in it. */
static int read_string(uintptr_t address, char *out, size_t capacity)
{
    size_t have = 0;
    while (have < capacity) {
        /* Never across a page: the string may end just before an
         * unmapped one. */
        size_t to_page = 4096 - ((address + have) & 4095);
        size_t want = capacity - have < to_page ? capacity - have : to_page;
        if (read_exact(out + have, address + have, want) < 0)
            return -1;
        if (memchr(out + have, '\0', want) != NULL)
            return 0;
        have += want;
    }
    return -1;
}

/* The program headers of the module at BIAS whose dynamic section the
 * loader says is at DYNAMIC: its ELF header's, if they agree. */
static int read_headers(uintptr_t bias, uintptr_t dynamic, ElfW(Phdr) *headers, size_t *count)
{
    /* The ELF header and, as linkers place them, the program headers
     * after it: one read, inside the first page. */
    if (read_exact(&start, bias, sizeof start) < 0)
        return -1;
    const ElfW(Ehdr) *header = &start.header;
    size_t size = (size_t)header->e_phnum * sizeof *headers;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_phentsize != sizeof(ElfW(Phdr)) ||
        header->e_phnum == 0 || header->e_phnum > HEADERS_MAX)
        return -1;
    if (header->e_phoff <= sizeof start && size <= sizeof start - header->e_phoff)
        memcpy(headers, start.bytes + header->e_phoff, size);
    else if (read_exact(headers, bias + header->e_phoff, size) < 0)
        return -1;
    *count = header->e_phnum;
    for (size_t i = 0; i < *count; i++)
        if (headers[i].p_type == PT_DYNAMIC)
            return bias + headers[i].p_vaddr == dynamic ? 0 : -1;
    return dynamic == 0 ? 0 : -1;
}

/* Span and build-id of MODULE from its HEADERS. */
static void describe(struct module_info *module, const ElfW(Phdr) *headers, size_t count)
{
    module->start = UINTPTR_MAX;
    module->end = 0;
    for (size_t i = 0; i < count; i++) {
        uintptr_t begin = module->bias + headers[i].p_vaddr;
        if (headers[i].p_type == PT_LOAD) {
            if (begin < module->start)
                module->start = begin;
            if (begin + headers[i].p_memsz > module->end)
                module->end = begin + headers[i].p_memsz;
        } else if (headers[i].p_type == PT_NOTE && module->build_id_length == 0) {
            size_t size = headers[i].p_filesz < sizeof notes ? headers[i].p_filesz : sizeof notes;
            if (read_exact(notes, begin, size) == 0)
                module->build_id_length = build_id_from_notes(notes, size, module->build_id);
        }
    }
}

/* The vdso has no file: its image in memory is a complete ELF file. */
static size_t memory_image_size(uintptr_t image)
{
    ElfW(Ehdr) header;
    if (read_exact(&header, image, sizeof header) < 0)
        return 0;
    return header.e_shoff + (size_t)header.e_shnum * header.e_shentsize;
}

/* Paths of MODULE as module_list.c gives them; -1: not a module to list. */
static int name_module(struct module_info *module, const char *name)
{
    const char *display = name, *file = name;
    if (module->is_main) {
        display = setup->program_name != NULL ? setup->program_name : "";
        file = "/proc/self/exe";
    } else if (setup->vdso != 0 && module->start <= setup->vdso && setup->vdso < module->end) {
        display = name[0] != '\0' ? name : "linux-vdso.so.1";
        file = "";
        module->memory_image = (const void *)setup->vdso;
        module->memory_size = memory_image_size(setup->vdso);
    } else if (name[0] == '\0') {
        return -1;
    }
    module->display_path = keep_path(display);
    module->file_path = keep_path(file);
    return module->display_path != NULL && module->file_path != NULL ? 0 : -1;
}

/* One entry of the loader's list, at ADDRESS, into MODULE; its next in
 * *NEXT. -1: the list cannot be read on; 1: an entry that is no module. */
static int read_entry(uintptr_t address, int first, struct module_info *module, uintptr_t *next)
{
    struct link_map entry;
    size_t count = 0;
    if (read_exact(&entry, address, sizeof entry) < 0 ||
        read_string((uintptr_t)entry.l_name, name, sizeof name) < 0)
        return -1;
    *next = (uintptr_t)entry.l_next;
    memset(module, 0, sizeof *module);
    module->bias = entry.l_addr;
    module->is_main = first && name[0] == '\0';
    if (module->is_main) {
        count = setup->program_header_count < HEADERS_MAX ? setup->program_header_count : HEADERS_MAX;
        if (read_exact(headers, setup->program_headers, count * sizeof *headers) < 0)
            return 1;
    } else if (read_headers(entry.l_addr, (uintptr_t)entry.l_ld, headers, &count) < 0) {
        return 1;
    }
    describe(module, headers, count);
    if (module->end <= module->start)
        return 1;
    return name_module(module, name) < 0 ? 1 : 0;
}

/* The loader's list into infos, sorted by start; how many. */
static size_t list_modules(void)
{
    struct r_debug loader;
    size_t count = 0;
    if (setup->loader == NULL || read_exact(&loader, (uintptr_t)setup->loader, sizeof loader) < 0)
        return 0;
    uintptr_t at = (uintptr_t)loader.r_map;
    for (int first = 1; at != 0 && count < MODULES_MAX; first = 0) {
        uintptr_t next = 0;
        int read = read_entry(at, first, &infos[count], &next);
        if (read < 0)
            break;
        if (read == 0)
            count++;
        at = next;
    }
    for (size_t i = 1; i < count; i++) /* insertion sort: a few hundred at most */
        for (size_t j = i; j > 0 && infos[j - 1].start > infos[j].start; j--) {
            struct module_info swap = infos[j];
            infos[j] = infos[j - 1];
            infos[j - 1] = swap;
        }
    return count;
}

/* The cache directory a load would open (or the one a reader opened
 * before), opened and checked as a load opens it, but not made: a
 * directory that is not there holds no warm file. */
static int open_directory(void)
{
    if (setup->cache_directory[0] == '\0')
        return -1;
    return index_cache_deferred_open_directory(setup->cache_directory, setup->euid);
}

/* This library's build-id, from the list, as index_cache.c finds it. */
static void find_builder(size_t count)
{
    uintptr_t here = (uintptr_t)&find_builder;
    if (index_cache_key_builder_length() != 0)
        return; /* set by a load: never rewritten under a build's keys */
    for (size_t i = 0; i < count; i++)
        if (infos[i].start <= here && here < infos[i].end)
            index_cache_key_set_builder(infos[i].build_id, infos[i].build_id_length);
}

/* MODULE's cache file as a load takes it (index_cache_load's deferred
 * case), its check left to its first use; NULL: none, or not one to take
 * unread. *LINE_BYTES_USED is the load's line budget account. */
static const struct module_data *find_cached(int directory, const struct module_info *module,
                                             struct placeholder *placeholder,
                                             size_t *line_bytes_used)
{
    const struct options *options = setup->options;
    int mode = line_mode_of(options, module);
    size_t budget = 0;
    if (mode != 0 && *line_bytes_used < options->line_memory)
        budget = options->line_memory - *line_bytes_used;
    int line_flags = mode >> LINE_MODE_FLAGS_SHIFT;
    struct cache_key key;
    struct cache_fit fit;
    struct stat status;
    if (index_cache_key_of(module, index_cache_line_mode(budget, line_flags), options->demangle,
                           setup->roots, &key) < 0)
        return NULL;
    index_cache_fit_of(module, &key, budget, (line_flags & LINE_INLINES) != 0, options->demangle,
                       &fit);
    if (fstatat(directory, key.name, &status, AT_SYMLINK_NOFOLLOW) != 0 ||
        !index_cache_status_ours(&status, setup->euid))
        return NULL;
    memset(placeholder, 0, sizeof *placeholder);
    memcpy(placeholder->deferred.name, key.name, sizeof placeholder->deferred.name);
    placeholder->deferred.fit = fit;
    placeholder->deferred.euid = setup->euid;
    /* Where a load would check it whole at once (its lines cut by the
     * budget, its stamp lost to a copy, larger than the budget left), its
     * first use does. */
    placeholder->deferred.check_whole = !index_cache_takes_unread(&status, &key, &fit, setup->euid);
    placeholder->data.in_shared_mapping = 1;
    placeholder->data.deferred = &placeholder->deferred;
    *line_bytes_used += budget != 0 ? (size_t)status.st_size : 0;
    return &placeholder->data;
}

static struct index_snapshot *build(void)
{
    size_t count = list_modules();
    if (count == 0)
        return NULL;
    int directory = open_directory();
    if (directory >= 0)
        find_builder(count);
    size_t line_bytes_used = 0;
    struct index_snapshot *snapshot = &storage.snapshot;
    snapshot->count = count;
    snapshot->mapped_bytes = 0; /* static: never unmapped */
    for (size_t i = 0; i < count; i++) {
        const struct module_info *info = &infos[i];
        struct index_module *out = &snapshot->modules[i];
        out->bias = info->bias;
        out->start = info->start;
        out->end = info->end;
        out->path = info->display_path;
        out->data = directory >= 0 ? find_cached(directory, info, &placeholders[i], &line_bytes_used)
                                   : NULL;
        memcpy(out->build_id, info->build_id, sizeof out->build_id);
        out->build_id_length = info->build_id_length;
        out->is_main = info->is_main;
    }
    return snapshot;
}

const struct index_snapshot *index_at_crash_build(void)
{
    setup = index_left_to_reader();
    if (setup == NULL || atomic_exchange(&tried, 1) != 0)
        return index_published();
    int saved_errno = errno;
    self = getpid();
    struct index_snapshot *snapshot = build();
    errno = saved_errno;
    return snapshot != NULL ? index_publish_first(snapshot) : index_published();
}
