/* state_blob.c: checking and walking malloc_get_state()'s blob.
 * World: signal-safe (pure functions on memory).
 *
 * Every length in the blob is checked against the bytes there are before
 * it is used, so a damaged or hostile blob is refused, never read past. */
#include "state_blob.h"

#include <string.h>

uint64_t state_blob_checksum(const void *bytes, size_t size, size_t skip_at)
{
    const unsigned char *p = bytes;
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < size; i++) {
        unsigned char byte = i >= skip_at && i - skip_at < 8 ? 0 : p[i];
        h = (h ^ byte) * 0x100000001b3u;
    }
    return h;
}

size_t state_blob_module_size(size_t path_length)
{
    return sizeof(struct state_blob_module) + ((path_length + 7) & ~(size_t)7);
}

/* The modules area: records with their paths, 8-byte aligned. */
static int check_modules(const unsigned char *modules, size_t room, uint32_t count, size_t *size)
{
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct state_blob_module module;
        if (room - at < sizeof module)
            return -1;
        memcpy(&module, modules + at, sizeof module);
        if (module.path_length > STATE_BLOB_MAX_PATH || module.start > module.end ||
            room - at < state_blob_module_size(module.path_length))
            return -1;
        at += state_blob_module_size(module.path_length);
    }
    *size = at;
    return 0;
}

/* The stacks area: records of 8 bytes and frame_count frames each. */
static int check_stacks(const unsigned char *stacks, size_t room, uint32_t count, size_t *size)
{
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct state_blob_stack stack;
        if (room - at < sizeof stack)
            return -1;
        memcpy(&stack, stacks + at, sizeof stack);
        if (stack.frame_count > STATE_BLOB_MAX_FRAMES ||
            room - at - sizeof stack < (size_t)stack.frame_count * 8)
            return -1;
        at += sizeof stack + (size_t)stack.frame_count * 8;
    }
    *size = at;
    return 0;
}

static int check_blocks(const struct state_blob_block *blocks, uint32_t count,
                        uint32_t stack_count)
{
    for (uint32_t i = 0; i < count; i++)
        if (blocks[i].stack_index != STATE_BLOB_NO_STACK && blocks[i].stack_index >= stack_count)
            return -1;
    return 0;
}

int state_blob_check(const void *blob, size_t available, struct state_blob_view *view)
{
    const struct state_blob_header *header = blob;
    if (blob == NULL || available < STATE_BLOB_HEADER_SIZE ||
        memcmp(header->magic, STATE_BLOB_MAGIC, 8) != 0)
        return -1;
    if (header->version >> 8 > STATE_BLOB_MAJOR)
        return -2;
    uint64_t total = header->total_size;
    if (header->header_size != STATE_BLOB_HEADER_SIZE || total < STATE_BLOB_HEADER_SIZE ||
        total > available || header->option_count > STATE_BLOB_MAX_OPTIONS ||
        state_blob_checksum(blob, (size_t)total, offsetof(struct state_blob_header, checksum)) !=
            header->checksum)
        return -1;
    const unsigned char *bytes = blob;
    size_t at = STATE_BLOB_HEADER_SIZE, room = (size_t)total;
    size_t options_size = (size_t)header->option_count * 8, modules_size, stacks_size;
    if (room - at < options_size)
        return -1;
    view->options = (const uint64_t *)(bytes + at);
    at += options_size;
    if (check_modules(bytes + at, room - at, header->module_count, &modules_size) < 0)
        return -1;
    view->modules = bytes + at;
    view->modules_size = modules_size;
    at += modules_size;
    if (check_stacks(bytes + at, room - at, header->stack_count, &stacks_size) < 0)
        return -1;
    view->stacks = bytes + at;
    view->stacks_size = stacks_size;
    at += stacks_size;
    if ((room - at) / sizeof(struct state_blob_block) < header->block_count ||
        room - at != (size_t)header->block_count * sizeof(struct state_blob_block))
        return -1; /* the blocks end the blob exactly */
    view->blocks = (const struct state_blob_block *)(bytes + at);
    if (check_blocks(view->blocks, header->block_count, header->stack_count) < 0)
        return -1;
    view->header = header;
    return 0;
}

const struct state_blob_stack *state_blob_stack_at(const struct state_blob_view *view,
                                                   size_t offset, const uint64_t **frames,
                                                   size_t *next)
{
    const struct state_blob_stack *stack = (const struct state_blob_stack *)(view->stacks + offset);
    *frames = (const uint64_t *)(view->stacks + offset + sizeof *stack);
    *next = offset + sizeof *stack + (size_t)stack->frame_count * 8;
    return stack;
}

const struct state_blob_module *state_blob_module_at(const struct state_blob_view *view,
                                                     size_t offset, const char **path,
                                                     size_t *next)
{
    const struct state_blob_module *module =
        (const struct state_blob_module *)(view->modules + offset);
    *path = (const char *)(module + 1);
    *next = offset + state_blob_module_size(module->path_length);
    return module;
}

void state_blob_stack_offsets(const struct state_blob_view *view, size_t *offsets)
{
    size_t at = 0;
    for (uint32_t i = 0; i < view->header->stack_count; i++) {
        const uint64_t *frames;
        offsets[i] = at;
        state_blob_stack_at(view, at, &frames, &at);
    }
}
