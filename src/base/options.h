/* options.h: EXECINFO_EX_OPTIONS, "name=value:name=value" as in ASAN_OPTIONS. */
#ifndef EXECINFO_EX_OPTIONS_H
#define EXECINFO_EX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum lines_scope { LINES_NONE, LINES_MAIN, LINES_ALL };
enum report_format { REPORT_TEXT, REPORT_JSON };

#define OPTIONS_PATH_MAX 256

struct options {
    /* symbol index */
    enum lines_scope lines;   /* lines=none|main|all; default main */
    size_t line_memory;       /* line_memory=SIZE (K, M, G); default 64M */
    /* fatal-signal handler */
    int handler;              /* handler=0|1: install it at load; default 0 */
    uint64_t signals;         /* signals=SEGV,BUS,...: bit n for signal n */
    char report[OPTIONS_PATH_MAX]; /* report=stderr|PATH; "" is stderr */
    int overwrite;            /* overwrite=0|1: may replace an existing report file */
    enum report_format format;/* format=text|json */
    int frames;               /* frames=1..256; default 64 */
    int registers;            /* registers=0|1 */
    int modules;              /* modules=0|1; default 1 */
};

/* The signals the handler takes by default: SEGV BUS ILL FPE ABRT TRAP SYS. */
uint64_t options_default_signals(void);

void options_defaults(struct options *options);

/* Parse TEXT (NULL or "" leaves OPTIONS as it is). On an unknown name or a
 * malformed value, writes one line that says which into ERROR (capacity
 * ERROR_SIZE) and returns -EINVAL; options parsed before it are kept.
 * Normal world. */
int options_parse(struct options *options, const char *text, char *error, size_t error_size);

/* Parse a size with an optional K, M or G suffix. Returns 0 or -EINVAL. */
int options_parse_size(const char *text, size_t length, size_t *out);

#endif
