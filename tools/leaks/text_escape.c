/* text_escape.c: see text_escape.h.
 * World: normal (stdio). */
#include "text_escape.h"

void text_escape_write(FILE *out, const char *text, size_t length)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)text[i];
        if (byte == '\\') {
            fputs("\\\\", out);
        } else if (byte >= 0x20 && byte < 0x7f) {
            putc(byte, out);
        } else {
            char escape[4] = { '\\', 'x', digits[byte >> 4], digits[byte & 15] };
            fwrite(escape, 1, sizeof escape, out);
        }
    }
}
