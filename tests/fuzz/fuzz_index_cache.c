/* fuzz_index_cache.c: libFuzzer over the index cache's validator
 * (src/symbolize/index_cache.c): the signal-safe readers trust whatever
 * it accepts, so an accepted image must keep every offset inside, every
 * array sorted and every inline chain finite. The input's checksum is set to match first, so that
 * the checks behind it are reached (a damaged file with a valid checksum
 * is what a careless or hostile writer leaves). */
#include "symbolize/index_cache.h"

#include <stdlib.h>
#include <string.h>

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
    free(image);
    return 0;
}
