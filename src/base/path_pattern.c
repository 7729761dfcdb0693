/* path_pattern.c: %p in report= and minidump= paths, so that the children
 * of a preloaded program, which inherit the option, write files of their
 * own instead of one another's.
 * World: signal-safe (no libc beyond memcpy). */
#include "path_pattern.h"
#include "text_out.h"

#include <errno.h>
#include <string.h>

int path_pattern_expand(const char *pattern, pid_t pid, char *out, size_t capacity)
{
    char digits[72];
    size_t digit_count = format_unsigned(digits, (uint64_t)pid, 10), length = 0;
    for (const char *c = pattern; *c != '\0'; c++) {
        const char *piece = c;
        size_t piece_length = 1;
        if (c[0] == '%' && c[1] == 'p') {
            piece = digits;
            piece_length = digit_count;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            c++;
        }
        if (length + piece_length >= capacity) {
            if (capacity > 0)
                out[0] = '\0';
            return -ENAMETOOLONG;
        }
        memcpy(out + length, piece, piece_length);
        length += piece_length;
    }
    if (capacity == 0)
        return -ENAMETOOLONG;
    out[length] = '\0';
    return 0;
}
