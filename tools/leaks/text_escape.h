/* text_escape.h: bytes from an input, shown on a terminal as they are,
 * never acted on. */
#ifndef EXECINFO_EX_LEAKS_TEXT_ESCAPE_H
#define EXECINFO_EX_LEAKS_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Write LENGTH bytes of TEXT: printable ASCII as it is, a backslash as
 * "\\", every other byte (control bytes, DEL, bytes from 0x80: an escape
 * sequence, a lone C1 byte, invalid UTF-8) as "\xNN". Normal world (stdio). */
void text_escape_write(FILE *out, const char *text, size_t length);

#endif
