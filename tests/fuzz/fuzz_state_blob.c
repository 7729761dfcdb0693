/* fuzz_state_blob.c: libFuzzer over the state blob checker
 * (src/hooks/state_blob.c): any bytes are refused or give a view whose
 * every record can be walked inside the input. The seed is a real blob
 * (tests/fuzz/fuzz.mk writes it with tests/fixtures/state_program). Many
 * mutants fail the checksum first; FUZZ_FIX_CHECKSUM, the default, puts a
 * right one in so that the structure checks are reached. */
#include "hooks/state_blob.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void walk(const struct state_blob_view *view)
{
    volatile uint64_t sum = 0;
    size_t at = 0;
    for (uint32_t m = 0; m < view->header->module_count; m++) {
        const char *path;
        const struct state_blob_module *module = state_blob_module_at(view, at, &path, &at);
        for (uint32_t i = 0; i < module->path_length; i++)
            sum += (unsigned char)path[i];
    }
    size_t *offsets = malloc(((size_t)view->header->stack_count + 1) * sizeof *offsets);
    if (offsets == NULL)
        return;
    state_blob_stack_offsets(view, offsets);
    for (uint32_t s = 0; s < view->header->stack_count; s++) {
        const uint64_t *frames;
        size_t next;
        const struct state_blob_stack *stack = state_blob_stack_at(view, offsets[s], &frames, &next);
        for (uint32_t f = 0; f < stack->frame_count; f++)
            sum += frames[f];
    }
    for (uint32_t b = 0; b < view->header->block_count; b++) {
        uint32_t index = view->blocks[b].stack_index;
        if (index != STATE_BLOB_NO_STACK && index >= view->header->stack_count)
            abort();
        sum += view->blocks[b].size;
    }
    free(offsets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    size_t sum_at = offsetof(struct state_blob_header, checksum);
    if (size >= STATE_BLOB_HEADER_SIZE) {
        uint64_t total;
        memcpy(&total, copy + offsetof(struct state_blob_header, total_size), 8);
        if (total <= size) {
            uint64_t sum = state_blob_checksum(copy, (size_t)total, sum_at);
            memcpy(copy + sum_at, &sum, 8);
        }
    }
    struct state_blob_view view;
    if (state_blob_check(copy, size, &view) == 0)
        walk(&view);
    free(copy);
    return 0;
}
