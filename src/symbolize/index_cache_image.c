/* index_cache_image.c: an index cache file's checksum and the checks of
 * its contents, so that the signal-safe readers may trust what they map.
 * World: signal-safe (pure: memcpy, memcmp), because a file checked at
 * load by its header alone is mapped and checked whole at its first use,
 * which may be in the crash handler (index_cache_deferred.c). */
#include "index_cache_format.h"

#include <string.h>
#include <sys/stat.h>

void index_cache_mix(const unsigned char *bytes, size_t size, uint64_t lanes[4])
{
    const uint64_t k = 0x9e3779b97f4a7c15u;
    size_t at = 0;
    for (; at + 32 <= size; at += 32)
        for (int i = 0; i < 4; i++) {
            uint64_t word;
            memcpy(&word, bytes + at + 8 * i, 8);
            lanes[i] = (lanes[i] ^ word) * k;
            lanes[i] ^= lanes[i] >> 29;
        }
    for (; at < size; at++) {
        lanes[at & 3] = (lanes[at & 3] ^ bytes[at]) * k;
        lanes[at & 3] ^= lanes[at & 3] >> 29;
    }
}

uint64_t index_cache_image_checksum(const unsigned char *image, size_t size)
{
    uint64_t lanes[4] = { 1, 2, 3, (uint64_t)size };
    size_t after = INDEX_CACHE_CHECKSUM_AT + 8;
    index_cache_mix(image, size < INDEX_CACHE_CHECKSUM_AT ? size : INDEX_CACHE_CHECKSUM_AT, lanes);
    if (size > after)
        index_cache_mix(image + after, size - after, lanes);
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++)
        sum = (sum ^ lanes[i]) * 0xff51afd7ed558ccdu + (uint64_t)i;
    return sum ^ (sum >> 33);
}

/* Every byte printable (as module_data.c stores names) or a NUL, the
 * last a NUL: any offset inside then names a whole string. */
static int strings_valid(const unsigned char *strings, size_t size)
{
    if (size == 0)
        return 1;
    if (strings[size - 1] != '\0')
        return 0;
    for (size_t i = 0; i < size; i++)
        if ((strings[i] < 0x20 && strings[i] != 0) || strings[i] == 0x7f)
            return 0;
    return 1;
}

/* Both names of every symbol inside the strings (which end in NUL). */
static int symbols_valid(const struct index_symbol *symbols, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (symbols[i].name >= strings || symbols[i].demangled >= strings ||
            (i > 0 && symbols[i].start < symbols[i - 1].start))
            return 0;
    }
    return 1;
}

static int lines_valid(const struct index_line *lines, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (lines[i].file >= strings || (i > 0 && lines[i].address < lines[i - 1].address))
            return 0;
    }
    return 1;
}

/* A string offset, or none where NONE_ALLOWED. */
static int string_valid(uint32_t offset, size_t strings, int none_allowed)
{
    return offset < strings || (none_allowed && offset == INDEX_INLINE_NONE);
}

/* Every name and file inside the strings, every parent before its call
 * (so that a walk up a chain ends). */
static int inlines_valid(const struct index_inline *inlines, size_t count, size_t strings)
{
    for (size_t i = 0; i < count; i++) {
        if (!string_valid(inlines[i].name, strings, 1) ||
            !string_valid(inlines[i].call_file, strings, 1) ||
            (inlines[i].parent != INDEX_INLINE_NONE && inlines[i].parent >= i))
            return 0;
    }
    return 1;
}

/* Strictly increasing, each naming a call of the file or none. */
static int inline_ranges_valid(const struct index_inline_range *ranges, size_t count,
                               size_t inline_count)
{
    for (size_t i = 0; i < count; i++) {
        if ((ranges[i].call != INDEX_INLINE_NONE && ranges[i].call >= inline_count) ||
            (i > 0 && ranges[i].from <= ranges[i - 1].from))
            return 0;
    }
    return 1;
}

/* The bytes of the arrays that follow the header. */
static uint64_t arrays_bytes(const struct cache_header *header)
{
    return header->symbol_count * sizeof(struct index_symbol) +
           header->line_count * sizeof(struct index_line) +
           header->inline_count * sizeof(struct index_inline) +
           header->inline_range_count * sizeof(struct index_inline_range);
}

/* Sizes add up without overflow. */
static int sizes_valid(const struct cache_header *header, size_t size)
{
    const uint64_t most = (uint64_t)1 << 40;
    if (header->symbol_count > most / sizeof(struct index_symbol) ||
        header->line_count > most / sizeof(struct index_line) ||
        header->inline_count > most / sizeof(struct index_inline) ||
        header->inline_range_count > most / sizeof(struct index_inline_range) ||
        header->strings_bytes > most || header->probes_bytes > most)
        return 0;
    uint64_t total = sizeof *header + arrays_bytes(header) + header->strings_bytes +
                     header->probes_bytes;
    return total == size && header->file_bytes == size && header->strings_bytes <= UINT32_MAX &&
           header->inline_count < INDEX_INLINE_NONE &&
           (header->strings_bytes > 0 || (header->symbol_count == 0 && header->line_count == 0)) &&
           (header->with_inlines || (header->inline_count == 0 && header->inline_range_count == 0));
}

void index_cache_image_arrays(const unsigned char *image, struct index_cache_arrays *out)
{
    struct cache_header header;
    memcpy(&header, image, sizeof header);
    out->symbols = (const struct index_symbol *)(image + sizeof header);
    out->symbol_count = header.symbol_count;
    out->lines = (const struct index_line *)(out->symbols + header.symbol_count);
    out->line_count = header.line_count;
    out->inlines = (const struct index_inline *)(out->lines + header.line_count);
    out->inline_count = header.inline_count;
    out->inline_ranges = (const struct index_inline_range *)(out->inlines + header.inline_count);
    out->inline_range_count = header.inline_range_count;
    out->strings = (const char *)(out->inline_ranges + header.inline_range_count);
    out->strings_bytes = header.strings_bytes;
}

int index_cache_header_valid(const struct cache_header *header, size_t size)
{
    static const char magic[8] = CACHE_MAGIC;
    return memcmp(header->magic, magic, sizeof magic) == 0 && header->format == CACHE_FORMAT &&
           header->header_bytes == sizeof *header &&
           header->builder_id_length <= MODULE_BUILD_ID_MAX &&
           header->build_id_length <= MODULE_BUILD_ID_MAX && header->with_lines <= 1 &&
           header->lines_truncated <= 1 && header->with_inlines <= header->with_lines &&
           header->demangled <= 1 && sizes_valid(header, size);
}

int index_cache_image_payload_valid(const unsigned char *image, size_t size)
{
    struct cache_header header;
    struct index_cache_arrays arrays;
    if (size < sizeof header || ((uintptr_t)image & 7) != 0)
        return 0;
    memcpy(&header, image, sizeof header);
    if (!index_cache_header_valid(&header, size) ||
        header.checksum != index_cache_image_checksum(image, size))
        return 0;
    index_cache_image_arrays(image, &arrays);
    size_t strings = arrays.strings_bytes;
    return symbols_valid(arrays.symbols, arrays.symbol_count, strings) &&
           lines_valid(arrays.lines, arrays.line_count, strings) &&
           inlines_valid(arrays.inlines, arrays.inline_count, strings) &&
           inline_ranges_valid(arrays.inline_ranges, arrays.inline_range_count,
                               arrays.inline_count) &&
           strings_valid((const unsigned char *)arrays.strings, strings);
}

int index_cache_header_fits(const struct cache_header *header, const struct cache_fit *fit)
{
    if (header->builder_id_length != fit->builder_id_length ||
        memcmp(header->builder_id, fit->builder_id, fit->builder_id_length) != 0 ||
        header->build_id_length != fit->build_id_length ||
        memcmp(header->build_id, fit->build_id, fit->build_id_length) != 0 ||
        memcmp(header->identity, fit->identity, sizeof fit->identity) != 0 ||
        header->with_lines != (fit->line_budget > 0) ||
        header->with_inlines != (fit->line_budget > 0 && fit->inlines) ||
        header->demangled != (fit->demangle != 0))
        return 0;
    if (fit->line_budget == 0)
        return 1;
    /* Whole lines fit any budget as large; cut ones only the same. */
    return header->lines_truncated ? header->line_budget == fit->line_budget
                                   : header->line_bytes <= fit->line_budget;
}

uint64_t index_cache_stamp(const char *name, int lines_truncated)
{
    uint64_t lanes[4] = { 11, 13, 17, 19 };
    index_cache_mix((const unsigned char *)name, strlen(name), lanes);
    uint64_t hash = lanes[0] ^ lanes[1] * 3 ^ lanes[2] * 5 ^ lanes[3] * 7;
    return (hash % 499999999u + 1) * 2 + (lines_truncated != 0);
}

int index_cache_status_ours(const struct stat *status, unsigned euid)
{
    return S_ISREG(status->st_mode) && status->st_nlink == 1 && status->st_uid == euid &&
           (status->st_mode & 022) == 0 && status->st_size >= (off_t)sizeof(struct cache_header) &&
           (uint64_t)status->st_size <= INDEX_CACHE_BYTES_MAX;
}

int index_cache_image_usable(const unsigned char *image, size_t size)
{
    struct cache_header header;
    struct index_cache_arrays arrays;
    if (size < sizeof header || ((uintptr_t)image & 7) != 0)
        return 0;
    memcpy(&header, image, sizeof header);
    if (!index_cache_header_valid(&header, size))
        return 0;
    index_cache_image_arrays(image, &arrays);
    return arrays.strings_bytes == 0 || arrays.strings[arrays.strings_bytes - 1] == '\0';
}
