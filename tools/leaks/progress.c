/* progress.c: "\r"-rewritten line on stderr, erased at the end. It
 * appears only after half a second, so small inputs never show one.
 * World: normal (stdio). */
#include "progress.h"

#include <inttypes.h>
#include <unistd.h>

#define PROGRESS_INTERVAL_NS 500000000L

void progress_init(struct progress *progress, FILE *out, int enabled, uint64_t total_bytes)
{
    progress->out = enabled && isatty(fileno(out)) ? out : NULL;
    progress->total_bytes = total_bytes;
    progress->width = 0;
    clock_gettime(CLOCK_MONOTONIC, &progress->last);
}

static int interval_passed(const struct timespec *since, const struct timespec *now)
{
    long long elapsed = (long long)(now->tv_sec - since->tv_sec) * 1000000000LL +
                        (now->tv_nsec - since->tv_nsec);
    return elapsed >= PROGRESS_INTERVAL_NS;
}

void progress_update(struct progress *progress, uint64_t lines, uint64_t bytes)
{
    struct timespec now;

    if (progress->out == NULL)
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!interval_passed(&progress->last, &now))
        return;
    progress->last = now;
    int width = fprintf(progress->out, "\rexecinfo_ex_leaks: %" PRIu64 " lines read", lines);
    if (progress->total_bytes > 0 && bytes <= progress->total_bytes)
        width += fprintf(progress->out, " (%" PRIu64 "%%)", bytes * 100 / progress->total_bytes);
    /* Cover what a longer line before left on screen. */
    for (int i = width; i < progress->width; i++)
        putc(' ', progress->out);
    progress->width = width > progress->width ? width : progress->width;
    fflush(progress->out);
}

void progress_finish(struct progress *progress)
{
    if (progress->out == NULL || progress->width == 0)
        return;
    fprintf(progress->out, "\r%*s\r", progress->width, "");
    fflush(progress->out);
    progress->width = 0;
}
