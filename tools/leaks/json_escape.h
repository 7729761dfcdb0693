/* json_escape.h: a C string as a JSON string, valid UTF-8 whatever it holds. */
#ifndef EXECINFO_EX_LEAKS_JSON_ESCAPE_H
#define EXECINFO_EX_LEAKS_JSON_ESCAPE_H

#include <stdio.h>

/* Write TEXT quoted and escaped ("null" for NULL): control bytes as
 * escapes, and each byte that does not begin a valid UTF-8 sequence (paths
 * from a trace may hold any bytes) as U+FFFD. Normal world (stdio). */
void json_escape_write(FILE *out, const char *text);

#endif
