/* state_blob.h: the format of malloc_get_state()'s blob (docs/STATE_BLOB.md),
 * shared by the hooks library, which writes and restores it, and the leak
 * report tool, which reads saved ones. Pure functions on memory. */
#ifndef EXECINFO_EX_STATE_BLOB_H
#define EXECINFO_EX_STATE_BLOB_H

#include <stddef.h>
#include <stdint.h>

#define STATE_BLOB_MAGIC "EXEXSTAT"
#define STATE_BLOB_MAJOR 1
#define STATE_BLOB_MINOR 0
#define STATE_BLOB_HEADER_SIZE 72
#define STATE_BLOB_MAX_FRAMES 64
#define STATE_BLOB_MAX_OPTIONS 32
#define STATE_BLOB_MAX_PATH 4096
#define STATE_BLOB_NO_STACK UINT32_MAX

/* The fixed header, in the blob as it is here (little-endian x86_64). */
struct state_blob_header {
    char magic[8];
    uint32_t version;            /* major << 8 | minor */
    uint32_t header_size;
    uint64_t total_size;
    uint64_t checksum;           /* FNV-1a 64 of the blob with this field 0 */
    uint32_t block_count;
    uint32_t stack_count;
    uint64_t live_bytes;
    uint32_t pid;
    uint32_t option_count;
    uint64_t written_at;         /* Unix seconds */
    uint32_t module_count;
    uint32_t reserved;           /* 0 */
};

/* A module the stacks' frames lie in, so that a reader in another process
 * can name them: followed by path_length bytes of path (no NUL), padded
 * with zeroes to a multiple of 8. */
struct state_blob_module {
    uint64_t start, end;         /* its mapped address range in the writer */
    uint64_t bias;               /* its load bias: file address = address - bias */
    uint32_t path_length;
    uint32_t reserved;
};

struct state_blob_stack {        /* followed by frame_count uint64 frames */
    uint32_t thread;
    uint32_t frame_count;
};

struct state_blob_block {
    uint64_t address;
    uint64_t size;
    uint32_t stack_index;        /* into the blob's stacks, or STATE_BLOB_NO_STACK */
    uint32_t flags;              /* 0 */
};

/* What a checked blob holds, and where. */
struct state_blob_view {
    const struct state_blob_header *header;
    const uint64_t *options;
    const unsigned char *modules;         /* the first module record */
    size_t modules_size;
    const unsigned char *stacks;          /* the first stack record */
    size_t stacks_size;                   /* bytes of all stack records */
    const struct state_blob_block *blocks;
};

/* FNV-1a 64 of BYTES, with the 8 bytes at SKIP_AT (an offset, or SIZE_MAX
 * for none) taken as zeroes. Every single changed byte changes it. */
uint64_t state_blob_checksum(const void *bytes, size_t size, size_t skip_at);

/* Check a blob of which AVAILABLE bytes may be read: 0 and *VIEW filled;
 * -1 malformed (magic, sizes, checksum, any record out of bounds); -2 a
 * newer major version. */
int state_blob_check(const void *blob, size_t available, struct state_blob_view *view);

/* The stack record at byte OFFSET of the stacks area, its frames, and the
 * offset of the next one. Only on a checked view. */
const struct state_blob_stack *state_blob_stack_at(const struct state_blob_view *view,
                                                   size_t offset, const uint64_t **frames,
                                                   size_t *next);

/* Offsets of each stack record, into OFFSETS (stack_count entries). */
void state_blob_stack_offsets(const struct state_blob_view *view, size_t *offsets);

/* The module record at byte OFFSET of the modules area, its path, and the
 * offset of the next one. Only on a checked view. */
const struct state_blob_module *state_blob_module_at(const struct state_blob_view *view,
                                                     size_t offset, const char **path,
                                                     size_t *next);

/* The bytes a module record with a path of LENGTH takes. */
size_t state_blob_module_size(size_t path_length);

#endif
