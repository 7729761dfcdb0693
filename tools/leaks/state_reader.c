/* state_reader.c: a saved state blob into a heap_snapshot.
 * World: normal (a tool).
 *
 * The blob is checked whole by the hooks library's own checker
 * (src/hooks/state_blob.c) before anything in it is used. A frame is
 * named as a trace names it, "MODULE:[0xREL]" with REL the call's address
 * in the module file, from the blob's module table, so that frames from a
 * trace and from a blob are symbolized alike. */
#define _GNU_SOURCE
#include "state_reader.h"
#include "hooks/state_blob.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int state_reader_is_blob(const void *head, size_t length)
{
    return length >= 8 && memcmp(head, STATE_BLOB_MAGIC, 8) == 0;
}

/* HEAD and the rest of FILE, into one malloc'd buffer. */
static int read_whole(FILE *file, const void *head, size_t head_length, unsigned char **bytes,
                      size_t *length)
{
    size_t capacity = 1 << 16, used = head_length;
    unsigned char *buffer = malloc(capacity);
    if (buffer != NULL)
        memcpy(buffer, head, head_length);
    while (buffer != NULL) {
        used += fread(buffer + used, 1, capacity - used, file);
        if (used < capacity)
            break;
        unsigned char *grown = capacity < SIZE_MAX / 2 ? realloc(buffer, capacity * 2) : NULL;
        if (grown == NULL) {
            free(buffer);
            buffer = NULL;
            break;
        }
        buffer = grown;
        capacity *= 2;
    }
    if (buffer == NULL)
        return -ENOMEM;
    if (ferror(file)) {
        free(buffer);
        return -EIO;
    }
    *bytes = buffer;
    *length = used;
    return 0;
}

/* The frame for return address ADDRESS, interned; by address alone when no
 * module of the blob holds it. */
static int intern_frame(struct heap_snapshot *heap, const struct state_blob_view *view,
                        uint64_t address, uint32_t *id)
{
    size_t at = 0;
    for (uint32_t m = 0; m < view->header->module_count; m++) {
        const char *path;
        size_t next;
        const struct state_blob_module *module = state_blob_module_at(view, at, &path, &next);
        at = next;
        if (address == 0 || address - 1 < module->start || address - 1 >= module->end)
            continue;
        char key[STATE_BLOB_MAX_PATH + 40];
        int length = snprintf(key, sizeof key, "%.*s:[0x%llx]", (int)module->path_length, path,
                              (unsigned long long)(address - 1 - module->bias));
        struct frame frame = { .kind = FRAME_MODULE_OFFSET, .module = path,
                               .module_length = module->path_length,
                               .address = address - 1 - module->bias };
        return frame_table_intern(&heap->frames, key, (size_t)length, &frame, id);
    }
    char key[40];
    int length = snprintf(key, sizeof key, "[0x%llx]", (unsigned long long)address);
    struct frame frame = { .kind = FRAME_ADDRESS, .address = address };
    return frame_table_intern(&heap->frames, key, (size_t)length, &frame, id);
}

/* Each blob stack as a stack of the snapshot: IDS[i] for stack record i. */
static int intern_stacks(struct heap_snapshot *heap, const struct state_blob_view *view,
                         uint32_t *ids)
{
    size_t at = 0;
    for (uint32_t s = 0; s < view->header->stack_count; s++) {
        const uint64_t *frames;
        size_t next;
        const struct state_blob_stack *stack = state_blob_stack_at(view, at, &frames, &next);
        at = next;
        uint32_t frame_ids[STATE_BLOB_MAX_FRAMES];
        for (uint32_t f = 0; f < stack->frame_count; f++) {
            int result = intern_frame(heap, view, frames[f], &frame_ids[f]);
            if (result < 0)
                return result;
        }
        int result = stack_table_intern(&heap->stacks, frame_ids, stack->frame_count, &ids[s]);
        if (result < 0)
            return result;
    }
    return 0;
}

static int fill(struct heap_snapshot *heap, const struct state_blob_view *view)
{
    uint32_t count = view->header->stack_count;
    uint32_t *ids = malloc(((size_t)count + 1) * sizeof *ids);
    uint32_t none[1], unknown = 0;
    int result = ids != NULL ? intern_stacks(heap, view, ids) : -ENOMEM;
    if (result == 0)
        result = stack_table_intern(&heap->stacks, none, 0, &unknown);
    for (uint32_t b = 0; result == 0 && b < view->header->block_count; b++) {
        const struct state_blob_block *record = &view->blocks[b];
        struct live_block block = {
            .pointer = record->address, .size = record->size,
            .stack = record->stack_index == STATE_BLOB_NO_STACK ? unknown
                                                                : ids[record->stack_index],
            .origin = b + 1,
        };
        struct live_block replaced;
        if (block.pointer == 0)
            continue;
        heap->counts.events++;
        int put = live_blocks_put(&heap->blocks, &block, &replaced);
        if (put < 0)
            result = put;
        else if (put == 1)
            heap->counts.duplicate_allocations++;
    }
    free(ids);
    return result;
}

int state_reader_load(struct heap_snapshot *heap, FILE *file, const void *head,
                      size_t head_length, const char *name, FILE *messages)
{
    unsigned char *bytes = NULL;
    size_t length = 0;
    int result = read_whole(file, head, head_length, &bytes, &length);
    if (result < 0)
        return result;
    struct state_blob_view view;
    int checked = state_blob_check(bytes, length, &view);
    if (checked == 0 && view.header->total_size != length)
        checked = -1; /* bytes after the blob: not a saved blob alone */
    if (checked != 0) {
        fprintf(messages, "execinfo_ex_leaks: %s: %s\n", name,
                checked == -2 ? "a state blob of a newer version; not read"
                              : "not an intact state blob (damaged or truncated); not read");
        free(bytes);
        return -EINVAL;
    }
    result = fill(heap, &view);
    free(bytes);
    return result;
}

void state_reader_subtract(struct heap_snapshot *after, const struct heap_snapshot *before)
{
    size_t cursor = 0;
    const struct live_block *block;
    while ((block = live_blocks_next(&before->blocks, &cursor)) != NULL) {
        struct live_block *same = live_blocks_find(&after->blocks, block->pointer);
        if (same != NULL && same->size == block->size)
            live_blocks_remove(&after->blocks, block->pointer, NULL);
    }
}
