/* json_escape.c: JSON strings from untrusted bytes.
 * World: normal (stdio). */
#include "json_escape.h"

#include <stddef.h>
#include <stdint.h>

/* The length of the valid UTF-8 sequence at TEXT (2 to 4), or 0. */
static size_t utf8_sequence(const unsigned char *text)
{
    unsigned char lead = text[0];
    size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
    if (length == 0 || lead > 0xf4)
        return 0;
    uint32_t code = lead & (0x7f >> length);
    for (size_t i = 1; i < length; i++) {
        if ((text[i] & 0xc0) != 0x80)   /* the NUL terminator fails here too */
            return 0;
        code = code << 6 | (text[i] & 0x3f);
    }
    static const uint32_t smallest[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
        return 0;
    return length;
}

static void write_escaped_byte(FILE *out, unsigned char byte)
{
    switch (byte) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default: fprintf(out, "\\u%04x", byte);
    }
}

void json_escape_write(FILE *out, const char *text)
{
    if (text == NULL) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    for (const unsigned char *at = (const unsigned char *)text; *at != '\0';) {
        if (*at < 0x20 || *at == 0x7f || *at == '"' || *at == '\\') {
            write_escaped_byte(out, *at++);
        } else if (*at < 0x80) {
            putc(*at++, out);
        } else {
            size_t length = utf8_sequence(at);
            if (length == 0) {
                fputs("\\ufffd", out);
                at++;
            } else {
                fwrite(at, 1, length, out);
                at += length;
            }
        }
    }
    putc('"', out);
}
