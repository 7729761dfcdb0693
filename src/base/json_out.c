/* json_out.c: JSON values on a text_out.
 * World: signal-safe (text_out only). */
#include "json_out.h"

void json_string(struct text_out *out, const char *text)
{
    static const char digits[] = "0123456789abcdef";
    if (text == NULL) {
        text_out_string(out, "null");
        return;
    }
    text_out_char(out, '"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') {
            text_out_char(out, '\\');
            text_out_char(out, (char)*c);
        } else if (*c < 0x20 || *c == 0x7f) {
            char escape[6] = { '\\', 'u', '0', '0', digits[*c >> 4], digits[*c & 15] };
            text_out_bytes(out, escape, sizeof escape);
        } else {
            text_out_char(out, (char)*c);
        }
    }
    text_out_char(out, '"');
}

void json_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "\"0x");
    text_out_hex(out, value);
    text_out_char(out, '"');
}

void json_signed(struct text_out *out, int64_t value)
{
    if (value < 0) {
        text_out_char(out, '-');
        text_out_decimal(out, (uint64_t)-value);
    } else {
        text_out_decimal(out, (uint64_t)value);
    }
}

void json_key(struct text_out *out, const char *key, int first)
{
    if (!first)
        text_out_char(out, ',');
    json_string(out, key);
    text_out_char(out, ':');
}
