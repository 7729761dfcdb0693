/* progress.h: a progress line on a terminal while a large input is read. */
#ifndef EXECINFO_EX_LEAKS_PROGRESS_H
#define EXECINFO_EX_LEAKS_PROGRESS_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* How often the caller should call progress_update, in lines. */
#define PROGRESS_LINES_PER_CHECK 1024

struct progress {
    FILE *out;              /* NULL: disabled */
    uint64_t total_bytes;   /* 0: unknown (a pipe) */
    struct timespec last;   /* start, then the last line written */
    int width;              /* of the line on screen; 0: none */
};

/* Enabled only when ENABLED and OUT is a terminal. Normal world. */
void progress_init(struct progress *progress, FILE *out, int enabled, uint64_t total_bytes);
/* Rewrite the line if half a second has passed since the last one (or the start). */
void progress_update(struct progress *progress, uint64_t lines, uint64_t bytes);
/* Erase the line (update draws it again). */
void progress_finish(struct progress *progress);

#endif
