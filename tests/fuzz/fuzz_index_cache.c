/* fuzz_index_cache.c: libFuzzer over the index cache's validator
 * (src/symbolize/index_cache.c): the signal-safe readers trust whatever
 * it accepts, so an accepted image must keep every offset inside and
 * every array sorted. The input's checksum is set to match first, so that
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
        size_t header = index_cache_header_bytes();
        uint64_t symbols, lines, strings;
        memcpy(&symbols, image + header - 40, 8);
        memcpy(&lines, image + header - 32, 8);
        memcpy(&strings, image + header - 24, 8);
        const struct index_symbol *symbol = (const struct index_symbol *)(image + header);
        const struct index_line *line = (const struct index_line *)(symbol + symbols);
        const char *text = (const char *)(line + lines);
        for (uint64_t i = 0; i < symbols; i++)
            if (symbol[i].name >= strings || strlen(text + symbol[i].name) >= strings ||
                (i > 0 && symbol[i].start < symbol[i - 1].start))
                abort();
        for (uint64_t i = 0; i < lines; i++)
            if (line[i].file >= strings || (i > 0 && line[i].address < line[i - 1].address))
                abort();
    }
    free(image);
    return 0;
}
