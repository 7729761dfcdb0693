/* profile_pprof.c: a heap profile as pprof's profile.proto, gzipped.
 * World: normal (malloc, zlib loaded at the first gzip: gzip_library.c).
 *
 * The encoder is hand-written, as pprof's own (profile/encode.go) is: the
 * format is varints and length-delimited fields over a handful of plain
 * tables, about a hundred lines, where protobuf-c would add a generated
 * codec, a build step and a message object per row. Each message is
 * written into a scratch buffer and then copied into its parent behind
 * its length. The gzip is zlib's (deflate with a gzip wrapper); pprof
 * reads a profile compressed or not, so the uncompressed encoding is
 * offered too, and written where zlib cannot be loaded. Field numbers are profile.proto's. */
#include "profile_render.h"
#include "gzip_library.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A growing byte buffer; FAILED once memory ran out (later writes are
 * dropped, and the caller sees it once, at the end). */
struct proto {
    unsigned char *bytes;
    size_t length, capacity;
    int failed;
};

static void proto_bytes(struct proto *p, const void *data, size_t length)
{
    if (p->failed)
        return;
    if (p->length + length > p->capacity) {
        size_t capacity = p->capacity ? p->capacity : 256;
        while (capacity < p->length + length)
            capacity *= 2;
        unsigned char *grown = realloc(p->bytes, capacity);
        if (grown == NULL) {
            p->failed = 1;
            return;
        }
        p->bytes = grown;
        p->capacity = capacity;
    }
    memcpy(p->bytes + p->length, data, length);
    p->length += length;
}

static void proto_varint(struct proto *p, uint64_t value)
{
    unsigned char bytes[10];
    size_t n = 0;
    do {
        bytes[n] = (unsigned char)(value & 0x7f);
        value >>= 7;
        if (value != 0)
            bytes[n] |= 0x80;
        n++;
    } while (value != 0);
    proto_bytes(p, bytes, n);
}

enum { WIRE_VARINT = 0, WIRE_LENGTH = 2 };

static void proto_key(struct proto *p, unsigned field, unsigned wire)
{
    proto_varint(p, (uint64_t)field << 3 | wire);
}

/* A varint field; zero is proto3's default and is left out. */
static void proto_uint(struct proto *p, unsigned field, uint64_t value)
{
    if (value == 0)
        return;
    proto_key(p, field, WIRE_VARINT);
    proto_varint(p, value);
}

static void proto_string(struct proto *p, unsigned field, const char *text)
{
    size_t length = strlen(text);
    proto_key(p, field, WIRE_LENGTH);
    proto_varint(p, length);
    proto_bytes(p, text, length);
}

/* CHILD as a length-delimited field of P; CHILD emptied for the next. */
static void proto_message(struct proto *p, unsigned field, struct proto *child)
{
    if (child->failed)
        p->failed = 1;
    proto_key(p, field, WIRE_LENGTH);
    proto_varint(p, child->length);
    proto_bytes(p, child->bytes, child->length);
    child->length = 0;
}

/* The string table: index 0 is "", as profile.proto requires. Strings
 * are written as they are first met; an index per string comes from a
 * small open-addressed table of their pointers' contents. */
struct strings {
    struct proto table;          /* the Profile's field 6 entries, already encoded */
    const char **slots;
    int64_t *indices;
    size_t slot_count, used;
    int failed;
};

static uint64_t hash_text(const char *text)
{
    uint64_t hash = 0xcbf29ce484222325u;
    for (; *text != '\0'; text++)
        hash = (hash ^ (unsigned char)*text) * 0x100000001b3u;
    return hash;
}

static int strings_grow(struct strings *s)
{
    size_t count = s->slot_count ? s->slot_count * 2 : 1024;
    const char **slots = calloc(count, sizeof *slots);
    int64_t *indices = calloc(count, sizeof *indices);
    if (slots == NULL || indices == NULL) {
        free(slots);
        free(indices);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->slot_count; i++) {
        if (s->slots[i] == NULL)
            continue;
        size_t j = hash_text(s->slots[i]) & (count - 1);
        while (slots[j] != NULL)
            j = (j + 1) & (count - 1);
        slots[j] = s->slots[i];
        indices[j] = s->indices[i];
    }
    free(s->slots);
    free(s->indices);
    s->slots = slots;
    s->indices = indices;
    s->slot_count = count;
    return 0;
}

static int64_t string_index(struct strings *s, const char *text)
{
    if (text == NULL || text[0] == '\0' || s->failed)
        return 0;
    if ((s->used + 1) * 2 > s->slot_count && strings_grow(s) < 0) {
        s->failed = 1;
        return 0;
    }
    size_t j = hash_text(text) & (s->slot_count - 1);
    for (; s->slots[j] != NULL; j = (j + 1) & (s->slot_count - 1))
        if (strcmp(s->slots[j], text) == 0)
            return s->indices[j];
    s->slots[j] = text;
    s->indices[j] = (int64_t)++s->used;
    proto_string(&s->table, 6, text);
    return s->indices[j];
}

static void value_type(struct proto *out, struct proto *scratch, struct strings *s,
                       unsigned field, const char *type, const char *unit)
{
    proto_uint(scratch, 1, (uint64_t)string_index(s, type));
    proto_uint(scratch, 2, (uint64_t)string_index(s, unit));
    proto_message(out, field, scratch);
}

static void encode_samples(struct proto *out, struct proto *scratch, struct proto *packed,
                           const struct heap_profile *profile)
{
    for (size_t i = 0; i < profile->sample_count; i++) {
        const struct profile_sample *sample = &profile->samples[i];
        for (size_t d = 0; d < sample->depth; d++)
            proto_varint(packed, profile->sample_locations[sample->first_location + d] + 1);
        proto_message(scratch, 1, packed);
        for (int v = 0; v < PROFILE_VALUES; v++)
            proto_varint(packed, (uint64_t)sample->values[v]);
        proto_message(scratch, 2, packed);
        proto_message(out, 2, scratch);
    }
}

static void encode_mappings(struct proto *out, struct proto *scratch, struct strings *s,
                            const struct heap_profile *profile)
{
    for (size_t i = 0; i < profile->mapping_count; i++) {
        const struct profile_mapping *mapping = &profile->mappings[i];
        proto_uint(scratch, 1, i + 1);
        proto_uint(scratch, 2, mapping->start);
        proto_uint(scratch, 3, mapping->limit);
        proto_uint(scratch, 4, mapping->file_offset);
        proto_uint(scratch, 5, (uint64_t)string_index(s, mapping->path));
        proto_uint(scratch, 6, (uint64_t)string_index(s, mapping->build_id));
        /* Named here, with lines and inlined calls: pprof needs neither
         * the binary nor a symbolizer. */
        for (unsigned field = 7; field <= 10; field++)
            proto_uint(scratch, field, 1);
        proto_message(out, 3, scratch);
    }
}

static void encode_locations(struct proto *out, struct proto *scratch, struct proto *line,
                             const struct heap_profile *profile)
{
    for (size_t i = 0; i < profile->location_count; i++) {
        const struct profile_location *location = &profile->locations[i];
        proto_uint(scratch, 1, i + 1);
        proto_uint(scratch, 2, location->mapping);
        proto_uint(scratch, 3, location->address);
        for (size_t l = 0; l < location->line_count; l++) {
            const struct profile_line *entry = &profile->lines[location->first_line + l];
            proto_uint(line, 1, entry->function + 1);
            proto_uint(line, 2, entry->line);
            proto_uint(line, 3, entry->column);
            proto_message(scratch, 4, line);
        }
        proto_message(out, 4, scratch);
    }
}

static void encode_functions(struct proto *out, struct proto *scratch, struct strings *s,
                             const struct heap_profile *profile)
{
    for (size_t i = 0; i < profile->function_count; i++) {
        const struct profile_function *function = &profile->functions[i];
        int64_t name = string_index(s, function->name);
        proto_uint(scratch, 1, i + 1);
        proto_uint(scratch, 2, (uint64_t)name);
        proto_uint(scratch, 3, (uint64_t)name);
        proto_uint(scratch, 4, (uint64_t)string_index(s, function->file));
        proto_message(out, 5, scratch);
    }
}

/* The Profile message: everything but the string table into OUT, the
 * strings into S's table, which the caller appends last. */
static void encode_profile(struct proto *out, struct strings *s, const struct heap_profile *profile)
{
    struct proto scratch = { 0 }, inner = { 0 };
    for (int v = 0; v < PROFILE_VALUES; v++)
        value_type(out, &scratch, s, 1, profile_value_names[v],
                   profile_value_is_bytes(v) ? "bytes" : "count");
    encode_samples(out, &scratch, &inner, profile);
    encode_mappings(out, &scratch, s, profile);
    encode_locations(out, &scratch, &inner, profile);
    encode_functions(out, &scratch, s, profile);
    proto_uint(out, 9, (uint64_t)profile->time_nanos);
    value_type(out, &scratch, s, 11, "space", "bytes");
    proto_uint(out, 12, 1);
    proto_uint(out, 14, (uint64_t)string_index(s, profile_value_names[PROFILE_INUSE_SPACE]));
    if (scratch.failed || inner.failed)
        out->failed = 1;
    free(scratch.bytes);
    free(inner.bytes);
}

static int write_all(int fd, const unsigned char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t done = write(fd, bytes, length);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return done < 0 ? -errno : -EIO;
        bytes += done;
        length -= (size_t)done;
    }
    return 0;
}

/* zlib's memory level: 4, not its default 8. Deflate's state holds a
 * hash table of 2^(level + 7) two-byte heads, zeroed whole at the start,
 * and a buffer of 2^(level + 6) four-byte symbols: 64 + 64 KiB of heap at
 * 8, 4 + 4 KiB at 4, allocated at exit, where a profile's write can set
 * the process's peak. The profile comes out up to 3% larger (churn's
 * 32,779 bytes at 8, 33,798 at 4; pool's 910 at both). */
#define GZIP_MEMORY_LEVEL 4

/* BYTES gzipped (zlib's deflate, a gzip header and trailer) to FD;
 * written as they are if zlib cannot be loaded (pprof reads both). */
static int write_gzip(int fd, const unsigned char *bytes, size_t length)
{
    const struct gzip_library *zlib = gzip_library_load();
    if (zlib == NULL)
        return write_all(fd, bytes, length);
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (zlib->deflate_init2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, GZIP_MEMORY_LEVEL,
                            Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof stream) != Z_OK)
        return -ENOMEM;
    unsigned char chunk[16384];
    int result = 0, status;
    stream.next_in = (unsigned char *)bytes;
    stream.avail_in = (uInt)length; /* a profile is far below 4 GiB */
    do {
        stream.next_out = chunk;
        stream.avail_out = sizeof chunk;
        status = zlib->deflate(&stream, Z_FINISH);
        if (status == Z_STREAM_ERROR) {
            result = -EIO;
            break;
        }
        result = write_all(fd, chunk, sizeof chunk - stream.avail_out);
    } while (result == 0 && status != Z_STREAM_END);
    zlib->deflate_end(&stream);
    return result;
}

int profile_write_pprof(const struct heap_profile *profile, int fd, int compressed)
{
    struct proto out = { 0 };
    struct strings strings = { 0 };
    /* The string table's entry 0, "": written first, as required. */
    proto_string(&strings.table, 6, "");
    encode_profile(&out, &strings, profile);
    proto_bytes(&out, strings.table.bytes, strings.table.length);
    int result = out.failed || strings.failed || strings.table.failed ? -ENOMEM : 0;
    if (result == 0)
        result = compressed ? write_gzip(fd, out.bytes, out.length)
                            : write_all(fd, out.bytes, out.length);
    free(out.bytes);
    free(strings.table.bytes);
    free(strings.slots);
    free(strings.indices);
    return result;
}
