/* profile_facts.c: the heap profile's tables, from the stack counts.
 * World: normal (malloc, qsort_r, dl_iterate_phdr, backtrace_resolve and
 * its libdw).
 *
 * The depot keeps one stack per thread (its first word is the thread);
 * a profile merges equal frames across threads, as heaptrack and pprof
 * show them. Every distinct address is resolved once, with its inlined
 * callers, by backtrace_resolve; a function is one (name, file) pair. */
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

/* The frames of every sample, one after another: return addresses. */
struct frame_words {
    uint64_t *words;
    size_t count, capacity;
};

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

static int compare_words(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct addresses, sorted, as locations; each sample's frames
 * turned into location indices, in the same places. */
static int make_locations(struct heap_profile *profile, const struct frame_words *frames)
{
    uint64_t *sorted = malloc((frames->count + 1) * sizeof *sorted);
    profile->sample_locations = malloc((frames->count + 1) * sizeof *profile->sample_locations);
    if (sorted == NULL || profile->sample_locations == NULL) {
        free(sorted);
        return -ENOMEM;
    }
    memcpy(sorted, frames->words, frames->count * sizeof *sorted);
    qsort(sorted, frames->count, sizeof *sorted, compare_words);
    size_t distinct = 0;
    for (size_t i = 0; i < frames->count; i++)
        if (distinct == 0 || sorted[distinct - 1] != sorted[i])
            sorted[distinct++] = sorted[i];
    profile->locations = calloc(distinct + 1, sizeof *profile->locations);
    if (profile->locations == NULL) {
        free(sorted);
        return -ENOMEM;
    }
    for (size_t i = 0; i < distinct; i++)
        profile->locations[i].address = sorted[i] - 1; /* the call, not the return */
    profile->location_count = distinct;
    for (size_t i = 0; i < frames->count; i++) {
        const uint64_t *found = bsearch(&frames->words[i], sorted, distinct, sizeof *sorted,
                                        compare_words);
        profile->sample_locations[i] = (size_t)(found - sorted);
    }
    free(sorted);
    return 0;
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
    for (size_t i = 0; i < profile->location_count; i++)
        calls[i] = (void *)(uintptr_t)profile->locations[i].address;
    struct backtrace_frame *frames = NULL;
    int count = backtrace_resolve(calls, (int)profile->location_count, 0, &frames);
    free(calls);
    if (count < 0)
        count = 0; /* every location unnamed: the addresses still tell */
    profile->resolved = frames;
    size_t line_capacity = 0, function_capacity = 0;
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
