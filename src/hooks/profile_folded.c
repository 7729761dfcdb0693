/* profile_folded.c: a heap profile as folded stacks, Brendan Gregg's
 * format that flamegraph.pl, speedscope, inferno and Pyroscope read: one
 * line per stack, its frames outermost first joined by ';', then a space
 * and the value.
 * World: normal (stdio). */
#include "profile_render.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* A name as one frame: ';' would split it, a newline end the line. */
static void put_name(FILE *out, const char *name)
{
    for (; *name != '\0'; name++)
        fputc(*name == ';' ? ':' : *name == '\n' ? ' ' : *name, out);
}

static void put_sample(FILE *out, const struct heap_profile *profile,
                       const struct profile_sample *sample, int64_t value)
{
    int first = 1;
    for (size_t d = sample->depth; d-- > 0;) {
        const struct profile_location *location =
            &profile->locations[profile->sample_locations[sample->first_location + d]];
        /* The location's own function last in its lines: the outermost. */
        for (size_t l = location->line_count; l-- > 0;) {
            const struct profile_line *line = &profile->lines[location->first_line + l];
            if (!first)
                fputc(';', out);
            put_name(out, profile->functions[line->function].name);
            first = 0;
        }
    }
    fprintf(out, " %lld\n", (long long)value);
}

int profile_write_folded(const struct heap_profile *profile, int fd, enum profile_value value)
{
    int copy = dup(fd);
    FILE *out = copy >= 0 ? fdopen(copy, "w") : NULL;
    if (out == NULL) {
        int error = errno;
        if (copy >= 0)
            close(copy);
        return -error;
    }
    for (size_t i = 0; i < profile->sample_count; i++) {
        const struct profile_sample *sample = &profile->samples[i];
        if (sample->values[value] != 0)
            put_sample(out, profile, sample, sample->values[value]);
    }
    int failed = ferror(out);
    if (fclose(out) != 0 || failed)
        return errno != 0 ? -errno : -EIO;
    return 0;
}
