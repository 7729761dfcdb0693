/* profile_build.c: a heap_snapshot's stacks and live blocks as a
 * heap_profile's tables. The frame table already holds each distinct
 * frame once, so a frame id is a location id; each location has one line
 * (the symbolizer names the physical function) and its own function.
 * World: normal (malloc). */
#define _GNU_SOURCE
#include "profile_build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *own(struct heap_profile *profile, char *text)
{
    if (text == NULL)
        return NULL;
    if (profile->owned_count == profile->owned_capacity) {
        size_t capacity = profile->owned_capacity ? profile->owned_capacity * 2 : 64;
        char **grown = realloc(profile->owned, capacity * sizeof *grown);
        if (grown == NULL) {
            free(text);
            return NULL;
        }
        profile->owned = grown;
        profile->owned_capacity = capacity;
    }
    profile->owned[profile->owned_count++] = text;
    return text;
}

/* The name a viewer shows: the function, else module+0xoffset as the
 * hooks library's profiles name an unknown frame. */
static const char *frame_name(struct heap_profile *profile, const struct frame_description *frame)
{
    char *text = NULL;
    if (frame->function != NULL)
        return frame->function;
    if (frame->module != NULL && !frame->runtime) {
        const char *base = strrchr(frame->module, '/');
        if (asprintf(&text, "%s+0x%llx", base ? base + 1 : frame->module,
                     (unsigned long long)frame->offset) < 0)
            return NULL;
    } else if (asprintf(&text, "0x%llx", (unsigned long long)frame->offset) < 0) {
        return NULL;
    }
    return own(profile, text);
}

static int name_locations(struct heap_profile *profile, const struct heap_snapshot *heap,
                          struct symbolizer *symbolizer)
{
    size_t count = heap->frames.count;
    profile->locations = calloc(count ? count : 1, sizeof *profile->locations);
    profile->lines = calloc(count ? count : 1, sizeof *profile->lines);
    profile->functions = calloc(count ? count : 1, sizeof *profile->functions);
    if (profile->locations == NULL || profile->lines == NULL || profile->functions == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < count; i++) {
        const struct frame_description *frame = symbolizer_describe(symbolizer, (uint32_t)i);
        const char *name = frame ? frame_name(profile, frame) : NULL;
        if (name == NULL)
            return -ENOMEM;
        profile->functions[i] = (struct profile_function){ name, frame->file ? frame->file : "" };
        profile->lines[i] = (struct profile_line){ i, frame->file ? frame->line : 0, 0 };
        profile->locations[i] = (struct profile_location){ frame->offset, 0, i, 1 };
    }
    profile->location_count = profile->line_count = profile->function_count = count;
    return 0;
}

/* In-use objects and bytes per stack, from the live blocks. */
static void count_in_use(const struct heap_snapshot *heap, int64_t (*in_use)[2])
{
    size_t cursor = 0;
    const struct live_block *block;
    while ((block = live_blocks_next(&heap->blocks, &cursor)) != NULL) {
        in_use[block->stack][0]++;
        in_use[block->stack][1] += (int64_t)block->size;
    }
}

static void add_sample(struct heap_profile *profile, const struct heap_snapshot *heap,
                       uint32_t stack, const int64_t in_use[2])
{
    const struct stack_entry *entry = &heap->stacks.stacks[stack];
    int64_t alloc_objects = (int64_t)entry->alloc_objects, alloc_bytes = (int64_t)entry->alloc_bytes;
    if (alloc_objects < in_use[0]) { /* a state blob: no allocation history */
        alloc_objects = in_use[0];
        alloc_bytes = in_use[1];
    }
    if (alloc_objects == 0)
        return;
    struct profile_sample *sample = &profile->samples[profile->sample_count++];
    *sample = (struct profile_sample){ entry->first, entry->depth, { 0 } };
    sample->values[PROFILE_ALLOC_OBJECTS] = alloc_objects;
    sample->values[PROFILE_ALLOC_SPACE] = alloc_bytes;
    sample->values[PROFILE_INUSE_OBJECTS] = in_use[0];
    sample->values[PROFILE_INUSE_SPACE] = in_use[1];
    for (int v = 0; v < PROFILE_VALUES; v++)
        profile->totals[v] += sample->values[v];
}

int profile_build(struct heap_profile *profile, const struct heap_snapshot *heap,
                  struct symbolizer *symbolizer)
{
    size_t stacks = heap->stacks.count;
    struct timespec now;

    memset(profile, 0, sizeof *profile);
    clock_gettime(CLOCK_REALTIME, &now);
    profile->time_nanos = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    profile->pid = 0; /* the traced program's is not in the trace */
    /* The stack table's frame ids are the location indices, in order. */
    profile->sample_locations = malloc((heap->stacks.frame_count ? heap->stacks.frame_count : 1) *
                                       sizeof *profile->sample_locations);
    profile->samples = calloc(stacks ? stacks : 1, sizeof *profile->samples);
    int64_t (*in_use)[2] = calloc(stacks ? stacks : 1, sizeof *in_use);
    int result = -ENOMEM;
    if (profile->sample_locations != NULL && profile->samples != NULL && in_use != NULL &&
        name_locations(profile, heap, symbolizer) == 0) {
        for (size_t i = 0; i < heap->stacks.frame_count; i++)
            profile->sample_locations[i] = heap->stacks.frame_ids[i];
        count_in_use(heap, in_use);
        for (size_t s = 0; s < stacks; s++)
            add_sample(profile, heap, (uint32_t)s, in_use[s]);
        result = 0;
    }
    free(in_use);
    return result;
}

void profile_build_free(struct heap_profile *profile)
{
    for (size_t i = 0; i < profile->owned_count; i++)
        free(profile->owned[i]);
    free(profile->owned);
    free(profile->samples);
    free(profile->sample_locations);
    free(profile->locations);
    free(profile->lines);
    free(profile->functions);
    memset(profile, 0, sizeof *profile);
}
