/* string_arena.c: chunks of strings, never moved, freed together.
 * World: normal (an ordinary program). */
#include "string_arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK_BYTES (256 * 1024)

struct arena_chunk {
    struct arena_chunk *next;
    char bytes[];
};

static int arena_add_chunk(struct string_arena *arena, size_t at_least)
{
    size_t capacity = at_least > ARENA_CHUNK_BYTES ? at_least : ARENA_CHUNK_BYTES;
    struct arena_chunk *chunk = malloc(sizeof *chunk + capacity);

    if (chunk == NULL)
        return -1;
    chunk->next = arena->chunks;
    arena->chunks = chunk;
    arena->used = 0;
    arena->capacity = capacity;
    return 0;
}

const char *string_arena_copy(struct string_arena *arena, const char *text, size_t length)
{
    if (arena->chunks == NULL || arena->capacity - arena->used < length + 1)
        if (arena_add_chunk(arena, length + 1) < 0)
            return NULL;
    char *copy = arena->chunks->bytes + arena->used;
    memcpy(copy, text, length);
    copy[length] = '\0';
    arena->used += length + 1;
    return copy;
}

void string_arena_free(struct string_arena *arena)
{
    while (arena->chunks != NULL) {
        struct arena_chunk *next = arena->chunks->next;
        free(arena->chunks);
        arena->chunks = next;
    }
    arena->used = arena->capacity = 0;
}
