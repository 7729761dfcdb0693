/* json_out.h: JSON values on a text_out, without malloc (signal-safe). */
#ifndef EXECINFO_EX_JSON_OUT_H
#define EXECINFO_EX_JSON_OUT_H

#include <stdint.h>

#include "text_out.h"

/* A string, escaped as JSON requires (control bytes as \u00XX; bytes from
 * 0x80 passed through); "null" for NULL. */
void json_string(struct text_out *out, const char *text);
/* "0x..." as a string. */
void json_hex(struct text_out *out, uintptr_t value);
void json_signed(struct text_out *out, int64_t value);
/* ,"key": (no comma when FIRST). */
void json_key(struct text_out *out, const char *key, int first);

#endif
