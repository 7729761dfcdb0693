/* profile_facts.c: the heap profile's tables, from the stack counts.
 * World: normal (malloc, qsort_r, dl_iterate_phdr, backtrace_resolve).
 *
 * The depot keeps one stack per thread (its first word is the thread);
 * a profile merges equal frames across threads, as heaptrack and pprof
 * show them. Every distinct address is resolved once, with its inlined
 * callers, by backtrace_resolve from the symbol index alone
 * (BACKTRACE_INDEX_ONLY), as the crash report names frames: libdw would
 * open every module's debug file (libc's: 15 MiB) at exit, more than a
 * small program's whole heap. A function is one (name, file) pair. */
#define _GNU_SOURCE
#include "profile_facts.h"
#include "heap.h"
#include "stack_counts.h"
#include "execinfo_ex.h"
#include "../base/array_grow.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The frames of every sample, one after another: return addresses, then
 * (make_locations) their location indices in the same places, which
 * become the profile's sample_locations. */
struct frame_words {
    uint64_t *words;
    size_t count, capacity;
};
_Static_assert(sizeof(uint64_t) == sizeof(size_t), "a frame's word becomes its location index");

static char *own(struct heap_profile *profile, char *text)
{
    if (text == NULL || array_grow(&profile->owned, &profile->owned_capacity,
                                   profile->owned_count, sizeof *profile->owned, 16) < 0) {
        free(text);
        return NULL;
    }
    profile->owned[profile->owned_count++] = text;
    return text;
}

static int add_sample(struct heap_profile *profile, struct frame_words *frames, stack_id stack,
                      size_t *capacity)
{
    void *addresses[STACK_DEPOT_MAX_FRAMES];
    uint32_t thread;
    int depth = heap_stack_frames(stack, &thread, addresses, STACK_DEPOT_MAX_FRAMES);
    struct stack_totals totals;
    stack_counts_read(stack, &totals);
    if (depth <= 0 || totals.allocated_objects == 0)
        return 0;
    if (array_grow(&profile->samples, capacity, profile->sample_count, sizeof *profile->samples,
                   256) < 0)
        return -ENOMEM;
    for (int i = 0; i < depth; i++) {
        if (array_grow(&frames->words, &frames->capacity, frames->count, sizeof *frames->words,
                       4096) < 0)
            return -ENOMEM;
        frames->words[frames->count++] = (uint64_t)(uintptr_t)addresses[i];
    }
    struct profile_sample *sample = &profile->samples[profile->sample_count++];
    sample->first_location = frames->count - (size_t)depth;
    sample->depth = (size_t)depth;
    const uint64_t values[PROFILE_VALUES] = {
        totals.allocated_objects, totals.allocated_bytes, totals.inuse_objects,
        totals.inuse_bytes,       totals.peak_objects,    totals.peak_bytes,
    };
    for (int v = 0; v < PROFILE_VALUES; v++)
        sample->values[v] = (int64_t)values[v];
    return 0;
}

/* Room for every sample and frame the first STACKS listed stacks hold,
 * allocated once: grown by doubling, the frames' table left its smaller
 * copies behind in fresh pages at exit (pool: 200 KiB of a 6 MiB
 * program's peak). A stack listed meanwhile waits for the next profile. */
static int reserve(struct heap_profile *profile, struct frame_words *frames, size_t stacks,
                   size_t *sample_capacity)
{
    size_t depth_total = 0;
    for (size_t i = 0; i < stacks; i++) {
        void *addresses[STACK_DEPOT_MAX_FRAMES];
        uint32_t thread;
        stack_id stack = stack_counts_stack(i);
        int depth = stack != 0 ? heap_stack_frames(stack, &thread, addresses,
                                                   STACK_DEPOT_MAX_FRAMES)
                               : 0;
        depth_total += depth > 0 ? (size_t)depth : 0;
    }
    profile->samples = malloc((stacks + 1) * sizeof *profile->samples);
    frames->words = malloc((depth_total + 1) * sizeof *frames->words);
    if (profile->samples == NULL || frames->words == NULL)
        return -ENOMEM;
    *sample_capacity = stacks + 1;
    frames->capacity = depth_total + 1;
    return 0;
}

static int compare_samples(const void *a, const void *b, void *context)
{
    const struct profile_sample *x = a, *y = b;
    const uint64_t *words = context;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    for (size_t i = 0; i < x->depth; i++) {
        uint64_t p = words[x->first_location + i], q = words[y->first_location + i];
        if (p != q)
            return p < q ? -1 : 1;
    }
    return 0;
}

/* Samples of equal frames (one stack, several threads) into one. */
static void merge_samples(struct heap_profile *profile, const struct frame_words *frames)
{
    if (profile->sample_count == 0)
        return;
    qsort_r(profile->samples, profile->sample_count, sizeof *profile->samples, compare_samples,
            frames->words);
    size_t kept = 0;
    for (size_t i = 1; i < profile->sample_count; i++) {
        struct profile_sample *last = &profile->samples[kept];
        if (compare_samples(last, &profile->samples[i], frames->words) == 0) {
            for (int v = 0; v < PROFILE_VALUES; v++)
                last->values[v] += profile->samples[i].values[v];
        } else {
            profile->samples[++kept] = profile->samples[i];
        }
    }
    profile->sample_count = kept + 1;
}

/* The peak counts are a snapshot taken as the live bytes grew; a heap
 * whose live bytes are higher now than at that snapshot (or that never
 * grew enough to take one) peaks now. */
static void settle_peak_and_totals(struct heap_profile *profile)
{
    int64_t inuse = 0;
    for (size_t i = 0; i < profile->sample_count; i++)
        inuse += profile->samples[i].values[PROFILE_INUSE_SPACE];
    int peak_is_now = inuse > 0 && (uint64_t)inuse >= stack_counts_peak_bytes();
    for (size_t i = 0; i < profile->sample_count; i++) {
        int64_t *values = profile->samples[i].values;
        if (peak_is_now) {
            values[PROFILE_PEAK_OBJECTS] = values[PROFILE_INUSE_OBJECTS];
            values[PROFILE_PEAK_SPACE] = values[PROFILE_INUSE_SPACE];
        }
        for (int v = 0; v < PROFILE_VALUES; v++)
            profile->totals[v] += values[v];
    }
}

/* The slot of return address WORD in a table of location indices (+ 1;
 * 0: empty), MASK + 1 slots: its own, or the empty one it would take. */
static size_t location_slot(const struct heap_profile *profile, const size_t *slots, size_t mask,
                            uint64_t word)
{
    size_t at = (size_t)((word * 0x9e3779b97f4a7c15u) >> 32) & mask;
    while (slots[at] != 0 && profile->locations[slots[at] - 1].address + 1 != word)
        at = (at + 1) & mask;
    return at;
}

/* A table of twice the slots (256 the first), the locations so far in it. */
static int grow_location_slots(const struct heap_profile *profile, size_t **slots, size_t *mask)
{
    size_t count = *slots != NULL ? (*mask + 1) * 2 : 256;
    size_t *grown = calloc(count, sizeof *grown);
    if (grown == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < profile->location_count; i++)
        grown[location_slot(profile, grown, count - 1, profile->locations[i].address + 1)] = i + 1;
    free(*slots);
    *slots = grown;
    *mask = count - 1;
    return 0;
}

/* The distinct addresses as locations, in the order first met, found
 * through a table of their indices (at most half full); each frame's word
 * turned into its location's index in place. A sorted copy of the frames
 * and a second table as long cost three times the frames' memory at exit. */
static int make_locations(struct heap_profile *profile, struct frame_words *frames)
{
    size_t *slots = NULL, mask = 0, capacity = 0;
    int result = grow_location_slots(profile, &slots, &mask);
    for (size_t i = 0; i < frames->count && result == 0; i++) {
        if ((profile->location_count + 1) * 2 > mask + 1 &&
            (result = grow_location_slots(profile, &slots, &mask)) < 0)
            break;
        size_t at = location_slot(profile, slots, mask, frames->words[i]);
        if (slots[at] == 0) {
            if (array_grow(&profile->locations, &capacity, profile->location_count,
                           sizeof *profile->locations, 256) < 0) {
                result = -ENOMEM;
                break;
            }
            /* The call, not the return. */
            profile->locations[profile->location_count] =
                (struct profile_location){ .address = frames->words[i] - 1 };
            slots[at] = ++profile->location_count;
        }
        frames->words[i] = slots[at] - 1;
    }
    free(slots);
    if (result == 0) {
        profile->sample_locations = (size_t *)frames->words;
        frames->words = NULL;
    }
    return result;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* A frame the symbolizer could not name: module+0xoffset, or the address. */
static const char *unnamed(struct heap_profile *profile, const struct backtrace_frame *frame,
                           uint64_t address)
{
    char *text = NULL;
    int made = frame != NULL && frame->module != NULL
                   ? asprintf(&text, "%s+0x%lx", base_name(frame->module), frame->offset)
                   : asprintf(&text, "0x%llx", (unsigned long long)address);
    return own(profile, made < 0 ? NULL : text);
}

/* Functions as (name, file) pairs, each line pointing at its own until
 * share_functions merges them. */
static int push_line(struct heap_profile *profile, size_t *line_capacity,
                     size_t *function_capacity, const char *name, const char *file,
                     const struct backtrace_frame *frame)
{
    if (name == NULL ||
        array_grow(&profile->lines, line_capacity, profile->line_count, sizeof *profile->lines,
                   1024) < 0 ||
        array_grow(&profile->functions, function_capacity, profile->function_count,
                   sizeof *profile->functions, 1024) < 0)
        return -ENOMEM;
    profile->functions[profile->function_count] = (struct profile_function){ name, file };
    profile->lines[profile->line_count++] = (struct profile_line){
        profile->function_count++, frame != NULL ? frame->line : 0,
        frame != NULL ? frame->column : 0,
    };
    return 0;
}

static int name_locations(struct heap_profile *profile)
{
    void **calls = malloc((profile->location_count + 1) * sizeof *calls);
    if (calls == NULL)
        return -ENOMEM;
    /* The return addresses: backtrace_resolve names each by its call. */
    for (size_t i = 0; i < profile->location_count; i++)
        calls[i] = (void *)(uintptr_t)(profile->locations[i].address + 1);
    struct backtrace_frame *frames = NULL;
    int count = backtrace_resolve(calls, (int)profile->location_count, BACKTRACE_INDEX_ONLY,
                                  &frames);
    free(calls);
    if (count < 0)
        count = 0; /* every location unnamed: the addresses still tell */
    profile->resolved = frames;
    /* At most one line a frame, and one for a location without a frame:
     * allocated once (see reserve). */
    size_t line_capacity = (size_t)count + profile->location_count + 1;
    size_t function_capacity = line_capacity;
    profile->lines = malloc(line_capacity * sizeof *profile->lines);
    profile->functions = malloc(function_capacity * sizeof *profile->functions);
    if (profile->lines == NULL || profile->functions == NULL)
        return -ENOMEM;
    int next = 0;
    for (size_t i = 0; i < profile->location_count; i++) {
        struct profile_location *location = &profile->locations[i];
        location->first_line = profile->line_count;
        for (; next < count && frames[next].index == (int)i; next++) {
            const struct backtrace_frame *frame = &frames[next];
            const char *name = frame->function != NULL ? frame->function
                                                       : unnamed(profile, frame, location->address);
            if (push_line(profile, &line_capacity, &function_capacity, name,
                          frame->file != NULL ? frame->file : "", frame) < 0)
                return -ENOMEM;
        }
        if (profile->line_count == location->first_line &&
            push_line(profile, &line_capacity, &function_capacity,
                      unnamed(profile, NULL, location->address), "", NULL) < 0)
            return -ENOMEM;
        location->line_count = profile->line_count - location->first_line;
    }
    return 0;
}

static int compare_functions(const void *a, const void *b, void *context)
{
    const struct profile_function *functions = context;
    const struct profile_function *x = &functions[*(const size_t *)a];
    const struct profile_function *y = &functions[*(const size_t *)b];
    int by_name = strcmp(x->name, y->name);
    return by_name != 0 ? by_name : strcmp(x->file, y->file);
}

/* One function per distinct (name, file): the lines renumbered. */
static int share_functions(struct heap_profile *profile)
{
    size_t n = profile->function_count;
    size_t *order = malloc((n + 1) * sizeof *order), *renumber = malloc((n + 1) * sizeof *renumber);
    if (order == NULL || renumber == NULL) {
        free(order);
        free(renumber);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, compare_functions, profile->functions);
    size_t kept = 0;
    struct profile_function *shared = profile->functions;
    /* Read from a copy: the kept ones are written over the table. */
    struct profile_function *copy = malloc((n + 1) * sizeof *copy);
    if (copy == NULL) {
        free(order);
        free(renumber);
        return -ENOMEM;
    }
    memcpy(copy, shared, n * sizeof *copy);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && compare_functions(&order[i - 1], &order[i], copy) == 0) {
            renumber[order[i]] = kept - 1;
            continue;
        }
        shared[kept] = copy[order[i]];
        renumber[order[i]] = kept++;
    }
    for (size_t i = 0; i < profile->line_count; i++)
        profile->lines[i].function = renumber[profile->lines[i].function];
    profile->function_count = kept;
    free(copy);
    free(order);
    free(renumber);
    return 0;
}

struct mapping_list {
    struct heap_profile *profile;
    size_t capacity;
    int failed;
};

/* The build-id of a loaded module, from its PT_NOTE segments, in hex. */
static void find_build_id(const struct dl_phdr_info *info, char *hex, size_t hex_size)
{
    hex[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_NOTE)
            continue;
        const char *note = (const char *)(info->dlpi_addr + segment->p_vaddr);
        const char *end = note + segment->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *header = (const ElfW(Nhdr) *)note;
            const char *name = note + sizeof *header;
            const unsigned char *desc = (const unsigned char *)name + ((header->n_namesz + 3) & ~3u);
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && header->n_descsz * 2 < hex_size) {
                for (unsigned b = 0; b < header->n_descsz; b++)
                    snprintf(hex + 2 * b, 3, "%02x", desc[b]);
                return;
            }
            note = (const char *)desc + ((header->n_descsz + 3) & ~3u);
        }
    }
}

static const char *module_path(struct heap_profile *profile, const char *name)
{
    if (name != NULL && name[0] != '\0')
        return name;
    char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0)
        return "";
    path[length] = '\0';
    const char *copy = own(profile, strdup(path));
    return copy != NULL ? copy : "";
}

static int add_module(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)size;
    struct mapping_list *list = context;
    struct heap_profile *profile = list->profile;
    char build_id[41];
    find_build_id(info, build_id, sizeof build_id);
    const char *path = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X))
            continue;
        if (path == NULL)
            path = module_path(profile, info->dlpi_name);
        if (array_grow(&profile->mappings, &list->capacity, profile->mapping_count,
                       sizeof *profile->mappings, 32) < 0) {
            list->failed = 1;
            return 1;
        }
        struct profile_mapping *mapping = &profile->mappings[profile->mapping_count++];
        mapping->start = info->dlpi_addr + segment->p_vaddr;
        mapping->limit = mapping->start + segment->p_memsz;
        mapping->file_offset = segment->p_offset;
        mapping->path = path;
        memcpy(mapping->build_id, build_id, sizeof build_id);
    }
    return 0;
}

static int find_mappings(struct heap_profile *profile)
{
    struct mapping_list list = { profile, 0, 0 };
    dl_iterate_phdr(add_module, &list);
    if (list.failed)
        return -ENOMEM;
    for (size_t i = 0; i < profile->location_count; i++) {
        struct profile_location *location = &profile->locations[i];
        for (size_t m = 0; m < profile->mapping_count; m++)
            if (location->address >= profile->mappings[m].start &&
                location->address < profile->mappings[m].limit)
                location->mapping = m + 1;
    }
    return 0;
}

static int gather(struct heap_profile *profile, struct frame_words *frames)
{
    size_t capacity = 0;
    size_t stacks = stack_counts_listed();
    if (reserve(profile, frames, stacks, &capacity) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < stacks; i++) {
        stack_id stack = stack_counts_stack(i);
        if (stack != 0 && add_sample(profile, frames, stack, &capacity) < 0)
            return -ENOMEM;
    }
    merge_samples(profile, frames);
    settle_peak_and_totals(profile);
    int result = make_locations(profile, frames);
    if (result == 0)
        result = name_locations(profile);
    if (result == 0)
        result = share_functions(profile);
    if (result == 0)
        result = find_mappings(profile);
    return result;
}

int profile_facts_gather(struct heap_profile *profile)
{
    memset(profile, 0, sizeof *profile);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    profile->time_nanos = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    profile->pid = (int)getpid();
    struct frame_words frames = { 0 };
    int result = gather(profile, &frames);
    free(frames.words);
    if (result < 0)
        profile_facts_free(profile);
    return result;
}

void profile_facts_free(struct heap_profile *profile)
{
    free(profile->samples);
    free(profile->sample_locations);
    free(profile->locations);
    free(profile->lines);
    free(profile->functions);
    free(profile->mappings);
    free(profile->resolved);
    for (size_t i = 0; i < profile->owned_count; i++)
        free(profile->owned[i]);
    free(profile->owned);
    memset(profile, 0, sizeof *profile);
}
