/* fuzz_index_cache.c: libFuzzer over the index cache's validator
 * (src/symbolize/index_cache.c): an image it accepts must keep every
 * offset inside, every array sorted and every inline chain finite. The
 * input's checksum is set to match first, so that the checks behind it
 * are reached (a damaged file with a valid checksum is what a careless or
 * hostile writer leaves).
 *
 * And over the readers of an image mapped at its first use, which is
 * checked in constant time only (index_cache_image_usable, issue 26): the
 * lookups, with every offset checked as it is followed, must stay inside
 * whatever such an image holds (AddressSanitizer says when not). */
#include "symbolize/index_cache.h"
#include "symbolize/index_cache_format.h"
#include "symbolize/lookup.h"

#include <stdlib.h>
#include <string.h>

/* Lookups over IMAGE as a first use leaves it (checked_at_use): at each
 * symbol's start, line's address and range's start, and around them. */
static void look_up_everywhere(const unsigned char *image, size_t size)
{
    struct index_cache_arrays arrays;
    index_cache_image_arrays(image, &arrays);
    struct module_data data = { arrays.symbols, arrays.symbol_count, arrays.lines,
                                arrays.line_count, arrays.strings, size,
                                0, 0, arrays.strings_bytes, 0, 1,
                                arrays.inlines, arrays.inline_count, arrays.inline_ranges,
                                arrays.inline_range_count, NULL, 1 };
    static union {
        struct index_snapshot snapshot;
        unsigned char bytes[sizeof(struct index_snapshot) + sizeof(struct index_module)];
    } one;
    one.snapshot.count = 1;
    one.snapshot.modules[0] = (struct index_module){ 0, 0, UINTPTR_MAX, "fuzz", &data, { 0 }, 0 };
    uint64_t probes[16];
    size_t count = 0;
    for (size_t i = 0; i < arrays.symbol_count && count < 6; i++)
        probes[count++] = arrays.symbols[i].start;
    for (size_t i = 0; i < arrays.line_count && count < 11; i++)
        probes[count++] = arrays.lines[i].address;
    for (size_t i = 0; i < arrays.inline_range_count && count < 16; i++)
        probes[count++] = arrays.inline_ranges[i].from;
    for (size_t i = 0; i < count; i++)
        for (int step = -1; step <= 1; step++) { /* an address near the end wraps, never loops */
            uint64_t near = probes[i] + (uint64_t)(int64_t)step;
            struct frame_location location;
            struct inlined_frame frame;
            lookup_frame(&one.snapshot, (uintptr_t)near + 1, (uintptr_t)near, 1, &location);
            size_t length = location.function != NULL ? strlen(location.function) : 0;
            length += location.file != NULL ? strlen(location.file) : 0;
            for (unsigned depth = 0; lookup_inlined(&location, depth, &frame); depth++)
                length += (frame.function != NULL ? strlen(frame.function) : 0) +
                          (frame.file != NULL ? strlen(frame.file) : 0);
            if (length == (size_t)-1)
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *image = aligned_alloc(16, (size + 16) & ~(size_t)15);
    if (image == NULL)
        return 0;
    memcpy(image, data, size);
    if (size >= INDEX_CACHE_CHECKSUM_AT + 8) {
        uint64_t checksum = index_cache_image_checksum(image, size);
        memcpy(image + INDEX_CACHE_CHECKSUM_AT, &checksum, sizeof checksum);
    }
    if (index_cache_image_valid(image, size)) {
        struct index_cache_arrays arrays;
        index_cache_image_arrays(image, &arrays);
        const struct index_symbol *symbol = arrays.symbols;
        const struct index_line *line = arrays.lines;
        const struct index_inline *call = arrays.inlines;
        const struct index_inline_range *range = arrays.inline_ranges;
        const char *text = arrays.strings;
        size_t strings = arrays.strings_bytes;
        for (size_t i = 0; i < arrays.symbol_count; i++)
            if (symbol[i].name >= strings || strlen(text + symbol[i].name) >= strings ||
                (i > 0 && symbol[i].start < symbol[i - 1].start))
                abort();
        for (size_t i = 0; i < arrays.line_count; i++)
            if (line[i].file >= strings || (i > 0 && line[i].address < line[i - 1].address))
                abort();
        for (size_t i = 0; i < arrays.inline_count; i++)
            if ((call[i].name != INDEX_INLINE_NONE && call[i].name >= strings) ||
                (call[i].call_file != INDEX_INLINE_NONE && call[i].call_file >= strings) ||
                (call[i].parent != INDEX_INLINE_NONE && call[i].parent >= i))
                abort();
        for (size_t i = 0; i < arrays.inline_range_count; i++) {
            if (i > 0 && range[i].from <= range[i - 1].from)
                abort();
            /* every chain ends: parents only go down */
            for (uint32_t at = range[i].call, steps = 0; at != INDEX_INLINE_NONE;
                 at = call[at].parent, steps++)
                if (at >= arrays.inline_count || steps > arrays.inline_count)
                    abort();
        }
    }
    if (index_cache_image_usable(image, size))
        look_up_everywhere(image, size);
    free(image);
    return 0;
}
