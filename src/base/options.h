/* options.h: EXECINFO_EX_OPTIONS, "name=value:name=value" as in ASAN_OPTIONS. */
#ifndef EXECINFO_EX_OPTIONS_H
#define EXECINFO_EX_OPTIONS_H

#include <stddef.h>

enum lines_scope { LINES_NONE, LINES_MAIN, LINES_ALL };

struct options {
    enum lines_scope lines;   /* lines=none|main|all; default main */
    size_t line_memory;       /* line_memory=SIZE (K, M, G); default 64M */
};

void options_defaults(struct options *options);

/* Parse TEXT (NULL or "" leaves OPTIONS as it is). On an unknown name or a
 * malformed value, writes one line that says which into ERROR (capacity
 * ERROR_SIZE) and returns -EINVAL; options parsed before it are kept.
 * Normal world. */
int options_parse(struct options *options, const char *text, char *error, size_t error_size);

/* Parse a size with an optional K, M or G suffix. Returns 0 or -EINVAL. */
int options_parse_size(const char *text, size_t length, size_t *out);

#endif
