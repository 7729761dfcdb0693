/* symbols.c: backtrace_symbols, one malloc'd block as glibc returns it.
 * World: normal (malloc; refreshes the index).
 *
 * The frames are formatted twice with the same code: once to count the
 * bytes, once into the block, so the strings are exactly the lines that
 * backtrace_symbols_fd would write, in the symbols shape. */
#include "execinfo_ex.h"
#include "frame_format.h"
#include "index.h"
#include "lookup.h"
#include "../base/text_out.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static size_t format_all(const struct index_snapshot *snapshot, void *const *buffer,
                         int size, char **strings, char *text, size_t capacity)
{
    struct text_out out;
    struct frame_location location;

    text_out_init_buffer(&out, text, capacity);
    for (int i = 0; i < size; i++) {
        uintptr_t address = (uintptr_t)buffer[i];
        /* The second pass may see a module mapped or unmapped since the
         * first: never point past the block. */
        if (strings != NULL)
            strings[i] = text + (out.total < capacity ? out.total : capacity - 1);
        /* Named exactly, as glibc's dladdr names them: a function pointer
         * or a faulting pc may be a function's first byte. */
        lookup_frame(snapshot, address, address, 0, &location);
        frame_format(&out, address, &location, FRAME_SHAPE_SYMBOLS);
        text_out_char(&out, '\0');
    }
    return out.total;
}

__attribute__((visibility("default")))
char **backtrace_symbols(void *const *buffer, int size)
{
    if (buffer == NULL || size <= 0)
        return NULL;
    backtrace_refresh_index();
    const struct index_snapshot *snapshot = index_acquire();
    size_t pointers = (size_t)size * sizeof(char *);
    size_t text_bytes = format_all(snapshot, buffer, size, NULL, NULL, 0);
    char **result = malloc(pointers + text_bytes);
    if (result == NULL) {
        index_release();
        errno = ENOMEM;
        return NULL;
    }
    format_all(snapshot, buffer, size, result, (char *)result + pointers, text_bytes);
    ((char *)result)[pointers + text_bytes - 1] = '\0';
    index_release();
    return result;
}
