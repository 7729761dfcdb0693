/* fuzz_state_blob.c: libFuzzer over the state blob checker
 * (src/hooks/state_blob.c): any bytes are refused or give a view whose
 * every record can be walked inside the input. The seed is a real blob
 * (tests/fuzz/fuzz.mk writes it with tests/fixtures/state_program). Many
 * mutants fail the checksum first; a right one is put in so that the
 * structure checks are reached. The length the checker is given may lie
 * short of the blob's total size (readable_length). */
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

/* The bytes the checker is told it may read: usually all of them, but an
 * input's last byte may also make the reader's length lie short of the
 * blob's total size (a truncated file, a sized call given too little), so
 * that the checker must refuse what its own header claims. The copy holds
 * exactly that many bytes: ASan sees any read past them. */
static size_t readable_length(const uint8_t *data, size_t size)
{
    if (size == 0 || data[size - 1] % 4 != 0)
        return size;
    size_t short_by = 1 + data[size - 1] / 4;
    return short_by < size ? size - short_by : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t available = readable_length(data, size);
    unsigned char *copy = malloc(available ? available : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, available);
    size_t sum_at = offsetof(struct state_blob_header, checksum);
    if (available >= STATE_BLOB_HEADER_SIZE) {
        /* The checksum of what the header claims, over the whole input:
         * right for a blob that the short length then cuts. */
        uint64_t total;
        memcpy(&total, data + offsetof(struct state_blob_header, total_size), 8);
        if (total <= size) {
            uint64_t sum = state_blob_checksum(data, (size_t)total, sum_at);
            memcpy(copy + sum_at, &sum, 8);
        }
    }
    struct state_blob_view view;
    if (state_blob_check(copy, available, &view) == 0) {
        if (view.header->total_size > available)
            abort(); /* accepted a blob larger than what may be read */
        walk(&view);
    }
    free(copy);
    return 0;
}
