/* index.c: build, publish and retire symbol index snapshots.
 * World: normal (malloc, libelf, a mutex). The reader side is index_reader.c.
 *
 * A snapshot is published with one atomic store and read without locks.
 * Old snapshots are unmapped only when no reader is inside any snapshot;
 * module data is never unmapped but is reused by later snapshots, so the
 * memory grows with the distinct files loaded, not with dlopen cycles. */
#define _GNU_SOURCE
#include "index.h"
#include "index_at_crash.h"
#include "file_probes.h"
#include "index_cache.h"
#include "index_light.h"
#include "line_mode.h"
#include "path_join.h"
#include "module_data.h"
#include "../base/array_grow.h"
#include "../base/environment.h"
#include "../base/load_touched.h"
#include "../unwind/rule_cache.h"

#include <errno.h>
#include <malloc.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- builder state, under build_lock ---- */

struct cached_data {
    char *path;
    unsigned char build_id[MODULE_BUILD_ID_MAX];
    unsigned build_id_length;
    struct stat file;          /* identity when there is no build-id */
    const void *memory_image;
    int with_lines;            /* line_mode() of the read */
    int incomplete;            /* memory ran out while it was read */
    unsigned read_in_build;    /* build_serial of that read */
    size_t line_bytes;         /* of line_bytes_used */
    const struct module_data *data;
};

static LOAD_TOUCHED pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static LOAD_TOUCHED pthread_t build_owner; /* while build_owned */
static LOAD_TOUCHED _Atomic int build_owned;
static __thread int fork_took_lock;    /* the forking thread, prepare to parent/child */
static __thread int building;          /* this thread holds build_lock */
static LOAD_TOUCHED _Atomic int constructed; /* index_at_load has run */
static LOAD_TOUCHED struct options active_options;
static LOAD_TOUCHED int options_ready;
static unsigned long long built_adds, built_subs;
static LOAD_TOUCHED int built_once;
/* A module ran out of memory: the next refreshes read it again, up to
 * RETRY_MAX rebuilds in a row, then keep what they have. */
#define RETRY_MAX 3
static int retry_pending, retry_count;
static unsigned build_serial;  /* counts snapshot builds */
static struct cached_data *cache;
static size_t cache_count, cache_capacity;
/* The cache by path: entry index + 1 (0: empty), open addressing, at most
 * half full; no table (count 0, a failed allocation) means a linear search.
 * Every rebuild looks up every loaded module: a program that dlopens
 * hundreds, each a refresh (load_watch.c), must not pay for a scan each. */
static size_t *cache_slots;
static size_t cache_slot_count;
static size_t line_bytes_used;
/* malloc_trim walks the whole heap: after a dlopen (one small module read,
 * its scratch small) it waits until the modules read since the last trim
 * hold this much index data. */
#define TRIM_AFTER_BYTES (1u << 20)
static size_t built_bytes_since_trim;
static int built_in_refresh;   /* a module was read from its ELF file */
/* Refreshes at load (the constructor, the install, after a dlopen) read
 * no ELF file: a module without a warm cache file is published without
 * data ("cold"), named in the crash handler from its file's symbol table
 * and by the second stage (src/fatal/second_stage.c); the first refresh
 * of a normal call that names frames builds what they left (issue 26). */
static int light_refresh;
static int cold_pending;       /* the published snapshot has cold modules */
/* index_light_allowed, decided once by the constructor: -1 not yet. */
static int loads_light = -1;
static struct index_snapshot **retired;
static size_t retired_count, retired_capacity;
/* Module data replaced by a second read, unmapped with the snapshots (a
 * fixed list: it fills only while memory is short, when a malloc of ours
 * is the last thing to try). */
#define RETIRED_DATA_MAX 32
static const struct module_data *retired_data[RETIRED_DATA_MAX];
static size_t retired_data_count;

static int same_identity(const struct cached_data *entry, const struct module_info *module,
                         const struct stat *file, int with_lines)
{
    if (entry->with_lines != with_lines || strcmp(entry->path, module->file_path) != 0 ||
        entry->memory_image != module->memory_image)
        return 0;
    if (module->build_id_length > 0)
        return entry->build_id_length == module->build_id_length &&
               memcmp(entry->build_id, module->build_id, module->build_id_length) == 0;
    return entry->file.st_dev == file->st_dev && entry->file.st_ino == file->st_ino &&
           entry->file.st_size == file->st_size &&
           entry->file.st_mtim.tv_sec == file->st_mtim.tv_sec &&
           entry->file.st_mtim.tv_nsec == file->st_mtim.tv_nsec;
}

static size_t path_hash(const char *path)
{
    size_t hash = 14695981039346656037u;
    for (; *path != '\0'; path++)
        hash = (hash ^ (unsigned char)*path) * 1099511628211u;
    return hash;
}

static void slot_put(size_t index)
{
    size_t mask = cache_slot_count - 1;
    for (size_t at = path_hash(cache[index].path) & mask;; at = (at + 1) & mask)
        if (cache_slots[at] == 0) {
            cache_slots[at] = index + 1;
            return;
        }
}

/* Entry INDEX, the last, was just added to the cache. */
static void slot_add(size_t index)
{
    if (cache_slot_count != 0 && (index + 1) * 2 <= cache_slot_count) {
        slot_put(index);
        return;
    }
    size_t count = cache_slot_count != 0 ? cache_slot_count : 64;
    while ((index + 1) * 2 > count)
        count *= 2;
    size_t *slots = calloc(count, sizeof *slots);
    free(cache_slots);
    cache_slots = slots;
    cache_slot_count = slots != NULL ? count : 0;
    for (size_t i = 0; slots != NULL && i <= index; i++)
        slot_put(i);
}

static int remember(const struct module_info *module, const struct stat *file,
                    int with_lines, const struct module_data *data)
{
    if (array_grow(&cache, &cache_capacity, cache_count, sizeof *cache, 32) < 0)
        return -ENOMEM;
    struct cached_data *entry = &cache[cache_count];
    memset(entry, 0, sizeof *entry);
    entry->path = strdup(module->file_path);
    if (entry->path == NULL)
        return -ENOMEM;
    memcpy(entry->build_id, module->build_id, sizeof entry->build_id);
    entry->build_id_length = module->build_id_length;
    entry->file = *file;
    entry->memory_image = module->memory_image;
    entry->with_lines = with_lines;
    entry->data = data;
    cache_count++;
    slot_add(cache_count - 1);
    return 0;
}

static int line_mode(const struct module_info *module)
{
    return line_mode_of(&active_options, module);
}

/* MODULE's cache entry, or NULL. */
static struct cached_data *cached(const struct module_info *module, const struct stat *file,
                                  int with_lines)
{
    if (cache_slot_count == 0) {
        for (size_t i = 0; i < cache_count; i++)
            if (same_identity(&cache[i], module, file, with_lines))
                return &cache[i];
        return NULL;
    }
    size_t mask = cache_slot_count - 1;
    for (size_t at = path_hash(module->file_path) & mask; cache_slots[at] != 0; at = (at + 1) & mask)
        if (same_identity(&cache[cache_slots[at] - 1], module, file, with_lines))
            return &cache[cache_slots[at] - 1];
    return NULL;
}

/* Data a published snapshot may still show: unmapped when no reader is. */
static void retire_data(const struct module_data *data)
{
    if (data != NULL && !data->in_shared_mapping && retired_data_count < RETIRED_DATA_MAX)
        retired_data[retired_data_count++] = data;
    /* else leaked: never unmapped under a reader */
}

/* Before the first module is read, not at load: with the index cache
 * warm no module is read, and the shared library then never loads libelf
 * (src/symbolize/elf_libraries.c). */
static void prepare_elf(void)
{
    static int ready;
    if (!ready)
        elf_version(EV_CURRENT);
    ready = 1;
}

/* The data of MODULE, from the cache or freshly built. NULL is a valid
 * answer (unreadable file), and is cached too. Data read while memory ran
 * out (*OUT_OF_MEMORY set) is cached as incomplete and read again while a
 * retry is pending. */
static const struct module_data *data_for(const struct module_info *module, int *out_of_memory)
{
    struct stat file;
    int with_lines = line_mode(module);

    memset(&file, 0, sizeof file);
    /* A build-id is the identity; else the file's (a stat per rebuild). */
    if (module->memory_image == NULL && module->build_id_length == 0 &&
        stat(module->file_path, &file) != 0)
        memset(&file, 0, sizeof file);
    struct cached_data *entry = cached(module, &file, with_lines);
    /* Once per build: a module mapped twice must not retire data that the
     * snapshot being built already shows. */
    if (entry != NULL && !(entry->incomplete && retry_pending && entry->read_in_build != build_serial))
        return entry->data;
    size_t budget = 0, line_bytes = 0;
    if (with_lines && line_bytes_used < active_options.line_memory)
        budget = active_options.line_memory - line_bytes_used;
    int incomplete = 0;
    /* Read by an earlier process, checked whole; else built and kept. */
    int line_flags = with_lines >> LINE_MODE_FLAGS_SHIFT;
    const struct module_data *data =
        index_cache_load(module, budget, line_flags, active_options.demangle, &line_bytes);
    if (data == NULL && light_refresh) {
        cold_pending = 1; /* not remembered: the next full refresh builds it */
        *out_of_memory = 0;
        return NULL;
    }
    if (data == NULL) {
        struct file_probes probes = { NULL, 0, 0, 0 };
        prepare_elf();
        data = module_data_build_recorded(module, budget, line_flags, &line_bytes, &probes,
                                          active_options.demangle);
        incomplete = errno == ENOMEM;
        built_bytes_since_trim += data != NULL ? data->mapped_bytes : 0;
        built_in_refresh = 1;
        if (!incomplete)
            index_cache_store(module, budget, line_flags, data, line_bytes, &probes);
        file_probes_free(&probes);
    }
    *out_of_memory = incomplete;
    if (entry == NULL && remember(module, &file, with_lines, data) < 0) {
        if (data != NULL && !data->in_shared_mapping) /* no one else has it: built again */
            munmap((void *)data, data->mapped_bytes);
        *out_of_memory = 1;
        return NULL;
    }
    if (entry == NULL) {
        entry = &cache[cache_count - 1];
    } else {
        retire_data(entry->data);
        line_bytes_used -= entry->line_bytes;
    }
    entry->data = data;
    entry->incomplete = incomplete;
    entry->read_in_build = build_serial;
    entry->line_bytes = line_bytes;
    line_bytes_used += line_bytes;
    return data;
}

/* Build the snapshot of LIST. A module whose read ran out of memory is in
 * it with what was read (perhaps nothing: shown as path(+0xoffset)) and
 * *INCOMPLETE is set; the other modules keep their names. */
static struct index_snapshot *snapshot_build(const struct module_list *list, int *incomplete)
{
    size_t bytes = sizeof(struct index_snapshot) + list->count * sizeof(struct index_module);
    for (size_t i = 0; i < list->count; i++)
        bytes += strlen(list->modules[i].display_path) + 1;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    struct index_snapshot *snapshot = map;
    char *strings = (char *)(snapshot->modules + list->count);
    snapshot->count = list->count;
    snapshot->mapped_bytes = bytes;
    *incomplete = 0;
    for (size_t i = 0; i < list->count; i++) {
        int out_of_memory = 0;
        const struct module_info *module = &list->modules[i];
        struct index_module *out = &snapshot->modules[i];
        size_t length = strlen(module->display_path) + 1;
        memcpy(strings, module->display_path, length);
        out->path = strings;
        strings += length;
        out->bias = module->bias;
        out->start = module->start;
        out->end = module->end;
        out->data = data_for(module, &out_of_memory);
        memcpy(out->build_id, module->build_id, sizeof out->build_id);
        out->build_id_length = module->build_id_length;
        out->is_main = module->is_main;
        *incomplete |= out_of_memory;
    }
    mprotect(map, bytes, PROT_READ);
    return snapshot;
}

static void retire(struct index_snapshot *old)
{
    if (old != NULL && old->mapped_bytes == 0)
        old = NULL; /* static (index_at_crash.c): never unmapped */
    int listed = old != NULL &&
                 array_grow(&retired, &retired_capacity, retired_count, sizeof *retired, 8) == 0;
    if (listed)
        retired[retired_count++] = old;
    /* A reader that arrives after this check loads the new pointer. */
    if (index_readers_active())
        return; /* an unlisted old snapshot is leaked rather than unmapped under a reader */
    if (old != NULL && !listed)
        munmap(old, old->mapped_bytes);
    for (size_t i = 0; i < retired_count; i++)
        munmap(retired[i], retired[i]->mapped_bytes);
    retired_count = 0;
    for (size_t i = 0; i < retired_data_count; i++)
        munmap((void *)retired_data[i], retired_data[i]->mapped_bytes);
    retired_data_count = 0;
}

static void load_options(void)
{
    if (options_ready)
        return;
    options_ready = 1;
    active_options = *environment_options();
}


static int rebuild_locked(void)
{
    struct module_list list;
    int result = module_list_read(&list);
    if (result < 0)
        return result;
    int incomplete;
    build_serial++;
    cold_pending = 0;
    index_cache_prepare(&active_options, &list);
    struct index_snapshot *snapshot = snapshot_build(&list, &incomplete);
    index_cache_finish();
    if (snapshot == NULL) {
        module_list_free(&list);
        return -ENOMEM;
    }
    /* Read again at the next refreshes, but not forever: memory that is
     * short for good (a ulimit), or an errno left at ENOMEM by a malloc
     * that succeeded, would make every call a rebuild. */
    retry_count = incomplete ? retry_count + 1 : 0;
    retry_pending = incomplete && retry_count < RETRY_MAX;
    /* An unloaded module's pcs may now hold other code. */
    if (list.subs != built_subs)
        rule_cache_invalidate();
    built_adds = list.adds;
    built_subs = list.subs;
    built_once = 1;
    module_list_free(&list);
    retire(index_publish(snapshot));
    return incomplete ? -ENOMEM : 0;
}

/* The strings a crash-time build needs, copied and joined now into
 * SETUP's text (path_join.h: no printf). */
static void keep_setup_text(struct index_at_crash_setup *setup)
{
    char *text = setup->text, *end = setup->text + sizeof setup->text;
    size_t name = strnlen(program_invocation_name, 4095);
    memcpy(text, program_invocation_name, name);
    text[name] = '\0';
    setup->program_name = text;
    text += name + 1;
    char parent[OPTIONS_PATH_MAX + 64];
    if (!index_cache_allowed(&active_options) ||
        cache_directory_join(active_options.index_cache_path, secure_getenv("XDG_CACHE_HOME"),
                             secure_getenv("HOME"), setup->euid, text, OPTIONS_PATH_MAX + 64,
                             parent) < 0)
        text[0] = '\0';
    setup->cache_directory = text;
    text += strlen(text) + 1;
    debug_roots_join(secure_getenv("EXECINFO_EX_DEBUG_ROOT"),
                     secure_getenv("EXECINFO_EX_SYSTEM_DEBUG_ROOT"), text, (size_t)(end - text));
    setup->roots = text;
}

/* Leave the index to its first reader (index_at_crash.c) in a load that
 * reads no module (light): the crash handler, or a signal-safe call,
 * lists the modules and finds their cache files itself; a normal call
 * that names frames builds the index as before. A load then lists
 * nothing, stats nothing, opens nothing (issue 26: those were a third of
 * what the library cost a preloaded /bin/true). Only where the loader has
 * a list to read (not in a static program). */
static int leave_to_reader(void)
{
    static LOAD_TOUCHED int left;
    static struct index_at_crash_setup setup; /* 8 KiB, its head written:
                                                 in .bss, beside the install's */
    /* Once left, until a reader builds: a dlopen since then is in the
     * loader's list, but not in a snapshot a reader built before it. */
    if (left)
        return index_published() == NULL;
    if (_r_debug.r_map == NULL)
        return 0;
    setup.loader = &_r_debug;
    setup.program_headers = getauxval(AT_PHDR);
    setup.program_header_count = getauxval(AT_PHNUM);
    setup.vdso = getauxval(AT_SYSINFO_EHDR);
    setup.options = &active_options;
    setup.euid = (unsigned)geteuid();
    keep_setup_text(&setup);
    index_leave_to_reader(&setup);
    left = 1;
    return 1;
}

static int refresh(int force, int after_load, int light)
{
    unsigned long long adds, subs;
    int result = 0;

    pthread_mutex_lock(&build_lock);
    build_owner = pthread_self();
    build_owned = 1;
    building = 1;
    load_options();
    if (light && !force && !built_once && leave_to_reader()) {
        /* No snapshot to rebuild, but the walker's rules must go as a
         * rebuild's would: an unloaded module's pcs may now hold other
         * code. */
        if (after_load) {
            module_list_counters(&adds, &subs);
            if (subs != built_subs)
                rule_cache_invalidate();
            built_subs = subs;
        }
        building = 0;
        build_owned = 0;
        pthread_mutex_unlock(&build_lock);
        return 0;
    }
    module_list_counters(&adds, &subs);
    if (force || !built_once || retry_pending || adds != built_adds || subs != built_subs ||
        (cold_pending && !light)) {
        built_in_refresh = 0;
        light_refresh = light;
        result = rebuild_locked();
        light_refresh = 0;
        /* libelf and libdw freed a few hundred KiB of scratch: give it back
         * rather than leave it resident in every process we are loaded in.
         * Nothing to give back when every module came from the cache. */
        if (built_in_refresh && (!after_load || built_bytes_since_trim >= TRIM_AFTER_BYTES)) {
            malloc_trim(0);
            built_bytes_since_trim = 0;
        }
    }
    building = 0;
    build_owned = 0;
    pthread_mutex_unlock(&build_lock);
    return result;
}

int index_refresh(int force)
{
    return refresh(force, 0, 0);
}

/* Decided at the first refresh at load (the install's may come before
 * the constructor), under the loader's lock like the module list. */
static int light_allowed(void)
{
    const struct options *options = environment_options();
    if (loads_light < 0)
        loads_light = options->index_at_load >= 0 ? !options->index_at_load
                                                  : index_light_allowed(options->heap);
    return loads_light;
}

int index_refresh_light(void)
{
    return refresh(0, 0, light_allowed());
}

int index_build_now(void)
{
    return index_refresh(1);
}

int index_refresh_after_load(void)
{
    /* A dlopen made by the build itself (libdw loading a helper) would
     * wait for this thread's own lock: the next refresh sees the module.
     * Before our constructor, its build will see everything. */
    if (building || !atomic_load(&constructed))
        return 0;
    return refresh(0, 1, light_allowed());
}

void index_statistics(struct index_statistics *out)
{
    const struct index_snapshot *snapshot = index_acquire();
    memset(out, 0, sizeof *out);
    if (snapshot != NULL) {
        out->modules = snapshot->count;
        out->mapped_bytes = snapshot->mapped_bytes;
        for (size_t i = 0; i < snapshot->count; i++) {
            const struct module_data *data = index_data_ready(snapshot->modules[i].data);
            if (data == NULL)
                continue;
            out->symbols += data->symbol_count;
            out->lines += data->line_count;
            out->mapped_bytes += data->mapped_bytes;
        }
    }
    index_release();
}

__attribute__((visibility("default")))
int backtrace_refresh_index(void)
{
    return index_refresh(0);
}

/* Referenced from index_reader.c so that static links keep this file. */
const char index_builder_anchor = 0;

/* fork while another thread rebuilds: the child would find build_lock
 * held by a thread it does not have, and its first backtrace_symbols would
 * wait forever (found by make stress). The fork waits for the rebuild;
 * but not a fork from a signal handler that interrupted this thread's own
 * rebuild (a crash handler that forks a debugger), which would wait for
 * itself. */
static void lock_for_fork(void)
{
    fork_took_lock = !(build_owned && pthread_equal(build_owner, pthread_self()));
    if (fork_took_lock)
        pthread_mutex_lock(&build_lock);
}

static void unlock_after_fork(void)
{
    if (fork_took_lock)
        pthread_mutex_unlock(&build_lock);
}

__attribute__((constructor))
static void index_at_load(void)
{
    /* The main thread's stack is not remembered here (it cost a read of
     * /proc/self/maps, 50 us, in every process): its first walk, or the
     * crash handler's, looks it up when it first reads it (issue 26).
     * Not forced: with handler=1 the install's constructor may have built
     * it already, and a second build re-read the module list for nothing. */
    int saved_errno = errno; /* main starts with errno 0, whatever the load did */
    index_refresh_light();
    /* Registered after the build, whose allocations start the hook layer
     * (which registers its own): prepare handlers run last registered
     * first, so build_lock is taken before the hook layer's locks, which a
     * rebuild's own malloc and free may need. */
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
    atomic_store(&constructed, 1);
    errno = saved_errno;
}
