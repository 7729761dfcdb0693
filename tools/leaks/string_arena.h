/* string_arena.h: copies of strings that stay where they are until the end. */
#ifndef EXECINFO_EX_LEAKS_STRING_ARENA_H
#define EXECINFO_EX_LEAKS_STRING_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct string_arena {
    struct arena_chunk *chunks;   /* newest first */
    size_t used, capacity;        /* in the newest chunk */
};

/* A NUL-terminated copy of LENGTH bytes of TEXT, or NULL (no memory). The
 * copy never moves. Normal world. */
const char *string_arena_copy(struct string_arena *arena, const char *text, size_t length);

void string_arena_free(struct string_arena *arena);

#endif
