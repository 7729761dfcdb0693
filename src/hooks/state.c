/* state.c: malloc_get_state(), malloc_state_size(), malloc_set_state()
 * for the hook layer's bookkeeping (docs/STATE_BLOB.md).
 * World: normal (malloc for the blob, the C library's malloc for scratch).
 *
 * A blob records the live blocks with their sizes and allocation stacks
 * (frames and thread, not depot ids, which mean nothing in another
 * process), a few counters and the options; not the heap's contents and
 * not the hook pointers. Restoring it makes its blocks known again: those
 * that are not this process's blocks are kept in a restored table (their
 * stacks back in the depot), and from then on a free of a pointer the hook
 * layer does not know is handed to glibc without being reported, as the
 * restored state may hold pointers the registry never saw. */
#define _GNU_SOURCE
#include "heap.h"
#include "block_set.h"
#include "state.h"
#include "state_blob.h"
#include "mtrace.h"
#include "../base/maps_reader.h"
#include "execinfo_ex.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct recorded {
    uintptr_t address;
    size_t size;
    stack_id stack;
};

/* The blocks of the last restore that are not this process's blocks,
 * sorted by address. Published once, never freed (a free may be reading
 * an older table): one table per malloc_set_state call. */
struct restored_table {
    size_t count;
    struct recorded *blocks;
    _Atomic unsigned char *freed;
};

static _Atomic(struct restored_table *) restored;

/* ---- collecting ---------------------------------------------------------- */

struct collection {
    struct recorded *blocks;
    size_t count, capacity;
};

static int collect_live(uintptr_t block, void *context)
{
    struct collection *collection = context;
    struct block_facts facts;
    if (collection->count < collection->capacity && block_read(&heap.layout, block, &facts) &&
        facts.state == BLOCK_LIVE)
        collection->blocks[collection->count++] =
            (struct recorded){ block, facts.size, facts.alloc_stack };
    return 0;
}

static void collect_restored(struct collection *collection)
{
    struct restored_table *table = atomic_load_explicit(&restored, memory_order_acquire);
    /* An address that is one of our blocks now was reused since: the
     * block itself is collected, not the stale record. */
    for (size_t i = 0; table != NULL && i < table->count; i++)
        if (!atomic_load_explicit(&table->freed[i], memory_order_relaxed) &&
            !block_set_contains(table->blocks[i].address) &&
            collection->count < collection->capacity)
            collection->blocks[collection->count++] = table->blocks[i];
}

static int by_stack(const void *a, const void *b)
{
    const struct recorded *left = a, *right = b;
    if (left->stack != right->stack)
        return left->stack < right->stack ? -1 : 1;
    return left->address < right->address ? -1 : left->address > right->address;
}

static int by_address(const void *a, const void *b)
{
    const struct recorded *left = a, *right = b;
    return left->address < right->address ? -1 : left->address > right->address;
}

static int count_one(uintptr_t block, void *context)
{
    (void)block;
    ++*(size_t *)context;
    return 0;
}

/* The live blocks now, sorted by stack (so that each stack is written
 * once); NULL when scratch memory is short. */
static struct recorded *collect(size_t *count)
{
    size_t upper = 0;
    block_set_each(count_one, &upper);
    struct restored_table *table = atomic_load_explicit(&restored, memory_order_acquire);
    upper += table != NULL ? table->count : 0;
    upper += 64; /* blocks allocated meanwhile by other threads are left out */
    struct collection collection = { __libc_malloc(upper * sizeof(struct recorded)), 0, upper };
    if (collection.blocks == NULL)
        return NULL;
    heap_scan_begin(); /* the headers read stay ours meanwhile (heap.h) */
    block_set_each(collect_live, &collection);
    heap_scan_end();
    collect_restored(&collection);
    qsort(collection.blocks, collection.count, sizeof *collection.blocks, by_stack);
    *count = collection.count;
    return collection.blocks;
}

/* ---- writing ------------------------------------------------------------- */

static const uint64_t *options_now(uint32_t *count)
{
    static uint64_t values[8];
    const struct options *o = &heap.options;
    values[0] = (uint64_t)o->heap_frames;
    values[1] = o->guard;
    values[2] = o->quarantine;
    values[3] = o->fill_max;
    values[4] = (uint64_t)(int64_t)o->free_fill;
    values[5] = (uint64_t)(int64_t)o->alloc_fill;
    values[6] = (uint64_t)o->on_error;
    values[7] = (uint64_t)o->free_frames;
    *count = 8;
    return values;
}

/* ---- the modules the frames lie in ---------------------------------------- */

#define MAX_MODULES 512

struct module_entry {
    uint64_t start, end, bias;
    const char *path;
    size_t length;
};

struct modules {
    struct module_entry entries[MAX_MODULES];
    uint32_t count;
    char executable[4096];      /* the main program's path: its l_name is "" */
};

static void note_module(struct modules *modules, uintptr_t frame)
{
    for (uint32_t i = 0; i < modules->count; i++)
        if (frame - 1 >= modules->entries[i].start && frame - 1 < modules->entries[i].end)
            return;
    struct dl_find_object object;
    if (modules->count == MAX_MODULES || frame == 0 ||
        _dl_find_object((void *)(frame - 1), &object) != 0 || object.dlfo_link_map == NULL)
        return;
    const struct link_map *map = object.dlfo_link_map;
    const char *path = map->l_name != NULL && map->l_name[0] != '\0' ? map->l_name
                                                                      : modules->executable;
    size_t length = strnlen(path, STATE_BLOB_MAX_PATH);
    modules->entries[modules->count++] = (struct module_entry){
        (uintptr_t)object.dlfo_map_start, (uintptr_t)object.dlfo_map_end, map->l_addr, path,
        length,
    };
}

/* Every module a frame of BLOCKS' stacks lies in; returns their bytes. */
static size_t collect_modules(const struct recorded *blocks, size_t count,
                              struct modules *modules)
{
    ssize_t length = readlink("/proc/self/exe", modules->executable,
                              sizeof modules->executable - 1);
    modules->executable[length > 0 ? length : 0] = '\0';
    modules->count = 0;
    for (size_t i = 0; i < count; i++) {
        if (blocks[i].stack == 0 || (i > 0 && blocks[i].stack == blocks[i - 1].stack))
            continue;
        void *frames[STATE_BLOB_MAX_FRAMES];
        uint32_t thread;
        int n = heap_stack_frames(blocks[i].stack, &thread, frames, STATE_BLOB_MAX_FRAMES);
        for (int f = 0; f < n; f++)
            note_module(modules, (uintptr_t)frames[f]);
    }
    size_t size = 0;
    for (uint32_t i = 0; i < modules->count; i++)
        size += state_blob_module_size(modules->entries[i].length);
    return size;
}

static unsigned char *write_modules(unsigned char *at, const struct modules *modules)
{
    for (uint32_t i = 0; i < modules->count; i++) {
        const struct module_entry *entry = &modules->entries[i];
        struct state_blob_module record = { entry->start, entry->end, entry->bias,
                                            (uint32_t)entry->length, 0 };
        size_t size = state_blob_module_size(entry->length);
        memset(at, 0, size);
        memcpy(at, &record, sizeof record);
        memcpy(at + sizeof record, entry->path, entry->length);
        at += size;
    }
    return at;
}

/* Bytes of the stack records for BLOCKS (sorted by stack), and how many. */
static size_t stacks_size(const struct recorded *blocks, size_t count, uint32_t *stacks)
{
    size_t size = 0;
    *stacks = 0;
    for (size_t i = 0; i < count; i++) {
        if (blocks[i].stack == 0 || (i > 0 && blocks[i].stack == blocks[i - 1].stack))
            continue;
        void *frames[STATE_BLOB_MAX_FRAMES];
        uint32_t thread;
        int n = heap_stack_frames(blocks[i].stack, &thread, frames, STATE_BLOB_MAX_FRAMES);
        size += sizeof(struct state_blob_stack) + (size_t)(n > 0 ? n : 0) * 8;
        ++*stacks;
    }
    return size;
}

/* Write the stack records; each block gets its stack's index. */
static unsigned char *write_stacks(unsigned char *at, const struct recorded *blocks, size_t count,
                                   uint32_t *indexes)
{
    uint32_t index = 0;
    for (size_t i = 0; i < count; i++) {
        if (blocks[i].stack == 0) {
            indexes[i] = STATE_BLOB_NO_STACK;
            continue;
        }
        if (i > 0 && blocks[i].stack == blocks[i - 1].stack) {
            indexes[i] = indexes[i - 1];
            continue;
        }
        void *frames[STATE_BLOB_MAX_FRAMES];
        struct state_blob_stack record;
        int n = heap_stack_frames(blocks[i].stack, &record.thread, frames, STATE_BLOB_MAX_FRAMES);
        record.frame_count = (uint32_t)(n > 0 ? n : 0);
        memcpy(at, &record, sizeof record);
        at += sizeof record;
        for (uint32_t f = 0; f < record.frame_count; f++, at += 8) {
            uint64_t frame = (uint64_t)(uintptr_t)frames[f];
            memcpy(at, &frame, 8);
        }
        indexes[i] = index++;
    }
    return at;
}

static void write_blocks(unsigned char *at, struct recorded *blocks, size_t count,
                         const uint32_t *indexes)
{
    /* In address order, for a reader's diff; the stack index travels along. */
    for (size_t i = 0; i < count; i++)
        blocks[i].stack = indexes[i];
    qsort(blocks, count, sizeof *blocks, by_address);
    for (size_t i = 0; i < count; i++, at += sizeof(struct state_blob_block)) {
        struct state_blob_block block = { blocks[i].address, blocks[i].size, blocks[i].stack, 0 };
        memcpy(at, &block, sizeof block);
    }
}

static void write_header(unsigned char *blob, size_t total, const struct recorded *blocks,
                         size_t count, uint32_t option_count, uint32_t stack_count,
                         uint32_t module_count)
{
    struct state_blob_header header = {
        .version = STATE_BLOB_MAJOR << 8 | STATE_BLOB_MINOR,
        .header_size = STATE_BLOB_HEADER_SIZE, .total_size = total,
        .block_count = (uint32_t)count, .stack_count = stack_count,
        .pid = (uint32_t)getpid(), .option_count = option_count,
        .written_at = (uint64_t)time(NULL), .module_count = module_count,
    };
    memcpy(header.magic, STATE_BLOB_MAGIC, 8);
    for (size_t i = 0; i < count; i++)
        header.live_bytes += blocks[i].size;
    memset(blob, 0, STATE_BLOB_HEADER_SIZE);
    memcpy(blob, &header, sizeof header);
}

static void *write_blob(struct recorded *blocks, size_t count, struct modules *modules)
{
    uint32_t option_count, stack_count;
    const uint64_t *options = options_now(&option_count);
    size_t modules_size = collect_modules(blocks, count, modules);
    size_t total = STATE_BLOB_HEADER_SIZE + (size_t)option_count * 8 + modules_size +
                   stacks_size(blocks, count, &stack_count) +
                   count * sizeof(struct state_blob_block);
    uint32_t *indexes = __libc_malloc((count + 1) * sizeof *indexes);
    unsigned char *blob = malloc(total); /* the caller's, to free */
    if (indexes == NULL || blob == NULL) {
        __libc_free(indexes);
        free(blob);
        return NULL;
    }
    write_header(blob, total, blocks, count, option_count, stack_count, modules->count);
    memcpy(blob + STATE_BLOB_HEADER_SIZE, options, (size_t)option_count * 8);
    unsigned char *at = write_modules(blob + STATE_BLOB_HEADER_SIZE + (size_t)option_count * 8,
                                      modules);
    at = write_stacks(at, blocks, count, indexes);
    write_blocks(at, blocks, count, indexes);
    __libc_free(indexes);
    uint64_t checksum = state_blob_checksum(blob, total, offsetof(struct state_blob_header, checksum));
    memcpy(blob + offsetof(struct state_blob_header, checksum), &checksum, 8);
    return blob;
}

__attribute__((visibility("default")))
void *malloc_get_state(void)
{
    if (!heap_ready()) {
        errno = ENOSYS; /* heap=0: no bookkeeping to record */
        return NULL;
    }
    heap_busy++;
    size_t count = 0;
    struct recorded *blocks = collect(&count);
    struct modules *modules = __libc_malloc(sizeof *modules);
    void *blob = blocks != NULL && modules != NULL ? write_blob(blocks, count, modules) : NULL;
    __libc_free(modules);
    __libc_free(blocks);
    heap_busy--;
    if (blob == NULL)
        errno = ENOMEM;
    else /* the caller's block: its free is traced, so is this */
        mtrace_allocation(__builtin_return_address(0), blob, malloc_state_size(blob));
    return blob;
}

/* ---- reading ------------------------------------------------------------- */

/* For a mapping of a file: the bytes of it that lie within the file (a
 * page wholly past its end raises SIGBUS when read). */
static uintptr_t file_backed_end(const struct maps_entry *entry)
{
    struct stat status;
    if (entry->path[0] != '/' || stat(entry->path, &status) != 0 || !S_ISREG(status.st_mode))
        return entry->end;
    uint64_t file = (uint64_t)status.st_size;
    if (file <= entry->offset)
        return entry->start;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t inside = (file - entry->offset + page - 1) / page * page;
    return inside < entry->end - entry->start ? entry->start + (uintptr_t)inside : entry->end;
}

struct readable_run {
    uintptr_t end;
};

/* The run of readable mappings, one after another, from the first one. */
static int extend_run(const struct maps_entry *entry, void *context)
{
    struct readable_run *run = context;
    if (entry->end <= run->end)
        return 0;
    if (entry->start > run->end || !entry->readable)
        return 1;
    uintptr_t end = entry->path[0] == '/' ? file_backed_end(entry) : entry->end;
    if (end <= run->end)
        return 1;
    run->end = end;
    return end < entry->end; /* the rest of this file mapping is past the file */
}

/* How much of STATE may be read: all of it when it is one of our blocks
 * (so that a truncated copy in a smaller block is caught), else what the
 * mappings from STATE on hold (for a file mapped back, only its pages
 * inside the file), and never more than the caller's LENGTH. A blob's
 * total_size is never trusted before this bound. */
static size_t readable_size(const void *state, size_t length)
{
    if (state == NULL)
        return 0;
    if (heap.recording && block_set_contains((uintptr_t)state)) {
        size_t usable = heap_usable_size((void *)state);
        return usable < length ? usable : length;
    }
    struct maps_entry entry;
    if (maps_find((uintptr_t)state, &entry) != 0)
        return length == SIZE_MAX ? 0 : length; /* no /proc: the caller's word, if any */
    struct readable_run run = { (uintptr_t)state };
    if (!entry.readable)
        return 0;
    run.end = entry.start;
    maps_for_each(extend_run, &run);
    size_t known = run.end > (uintptr_t)state ? run.end - (uintptr_t)state : 0;
    return known < length ? known : length;
}

__attribute__((visibility("default")))
size_t malloc_state_size(const void *state)
{
    struct state_blob_view view;
    if (state_blob_check(state, readable_size(state, SIZE_MAX), &view) != 0)
        return 0;
    return (size_t)view.header->total_size;
}

static struct restored_table *restored_table_new(size_t count)
{
    struct restored_table *table = __libc_calloc(1, sizeof *table);
    if (table == NULL)
        return NULL;
    table->blocks = __libc_malloc((count + 1) * sizeof *table->blocks);
    table->freed = __libc_calloc(count + 1, 1);
    if (table->blocks == NULL || table->freed == NULL) {
        __libc_free(table->blocks);
        __libc_free((void *)table->freed);
        __libc_free(table);
        return NULL;
    }
    return table;
}

/* The blob's blocks that are not ours now, their stacks put back in the
 * depot; already in address order. */
static struct restored_table *restore_table(const struct state_blob_view *view)
{
    const struct state_blob_header *header = view->header;
    size_t *offsets = __libc_malloc(((size_t)header->stack_count + 1) * sizeof *offsets);
    struct restored_table *table = restored_table_new(header->block_count);
    if (offsets == NULL || table == NULL) {
        __libc_free(offsets);
        return NULL;
    }
    state_blob_stack_offsets(view, offsets);
    for (uint32_t i = 0; i < header->block_count; i++) {
        const struct state_blob_block *block = &view->blocks[i];
        if (block_set_contains((uintptr_t)block->address))
            continue; /* ours: known already, by its own header */
        stack_id stack = 0;
        if (block->stack_index != STATE_BLOB_NO_STACK) {
            const uint64_t *frames;
            size_t next;
            const struct state_blob_stack *record =
                state_blob_stack_at(view, offsets[block->stack_index], &frames, &next);
            void *words[STATE_BLOB_MAX_FRAMES + 1];
            int count = record->frame_count < STATE_BLOB_MAX_FRAMES ? (int)record->frame_count
                                                                    : STATE_BLOB_MAX_FRAMES - 1;
            words[0] = (void *)(uintptr_t)record->thread;
            for (int f = 0; f < count; f++)
                words[1 + f] = (void *)(uintptr_t)frames[f];
            stack = stack_depot_put(words, count + 1);
        }
        table->blocks[table->count++] =
            (struct recorded){ (uintptr_t)block->address, (size_t)block->size, stack };
    }
    __libc_free(offsets);
    qsort(table->blocks, table->count, sizeof *table->blocks, by_address); /* state_forget */
    return table;
}

static int set_state(const void *state, size_t length)
{
    struct state_blob_view view;
    int checked = state_blob_check(state, readable_size(state, length), &view);
    if (checked != 0)
        return checked;
    if (!heap_ready())
        return 0; /* heap=0: nothing to restore into, nothing refused */
    heap_busy++;
    struct restored_table *table = restore_table(&view);
    if (table != NULL)
        atomic_store_explicit(&restored, table, memory_order_release);
    heap_busy--;
    return table != NULL ? 0 : -1;
}

__attribute__((visibility("default")))
int malloc_set_state(void *state)
{
    return set_state(state, SIZE_MAX);
}

__attribute__((visibility("default")))
int malloc_set_state_sized(const void *state, size_t length)
{
    return set_state(state, length);
}

/* ---- after a restore ------------------------------------------------------ */

int state_restored(void)
{
    return atomic_load_explicit(&restored, memory_order_acquire) != NULL;
}

void state_forget(uintptr_t address)
{
    struct restored_table *table = atomic_load_explicit(&restored, memory_order_acquire);
    if (table == NULL)
        return;
    size_t low = 0, high = table->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (table->blocks[middle].address < address)
            low = middle + 1;
        else
            high = middle;
    }
    if (low < table->count && table->blocks[low].address == address)
        atomic_store_explicit(&table->freed[low], 1, memory_order_relaxed);
}
