/* resolved_names.c: the second stage's answer, parsed in place, and laid
 * over the index's view of a frame (resolved_names.h has the format).
 * World: signal-safe (no allocation: the answer's own buffer holds the
 * strings, tabs and line ends made NULs). */
#include "resolved_names.h"

#include <errno.h>
#include <string.h>

#define FIELDS_MAX 7

/* Cut LINE (NUL-terminated) at its tabs into at most FIELDS_MAX fields. */
static int split_fields(char *line, char *fields[FIELDS_MAX])
{
    int count = 0;
    fields[count++] = line;
    for (char *at = line; *at != '\0'; at++)
        if (*at == '\t') {
            if (count == FIELDS_MAX)
                return -1;
            *at = '\0';
            fields[count++] = at + 1;
        }
    return count;
}

static int parse_hex(const char *text, uintptr_t *out)
{
    uintptr_t value = 0;
    if (*text == '\0')
        return -1;
    for (; *text != '\0'; text++) {
        int digit = *text >= '0' && *text <= '9'   ? *text - '0'
                    : *text >= 'a' && *text <= 'f' ? *text - 'a' + 10
                                                   : -1;
        if (digit < 0 || value >> 60 != 0)
            return -1;
        value = value << 4 | (uintptr_t)digit;
    }
    *out = value;
    return 0;
}

static unsigned parse_line_number(const char *text)
{
    unsigned value = 0;
    for (; *text >= '0' && *text <= '9' && value < 100000000u; text++)
        value = value * 10 + (unsigned)(*text - '0');
    return value;
}

static const char *or_null(const char *field)
{
    return field[0] != '\0' ? field : NULL;
}

static int parse_frame(struct resolved_names *names, char *fields[], int count)
{
    if (count != 7 || names->count == RESOLVED_FRAMES_MAX)
        return -1;
    struct resolved_frame *frame = &names->frames[names->count];
    if (parse_hex(fields[1], &frame->naming_address) < 0)
        return -1;
    frame->function = NULL;
    frame->demangled = NULL;
    frame->function_address = 0;
    if (parse_hex(fields[2], &frame->function_address) == 0 && fields[3][0] != '\0') {
        frame->function = fields[3];
        frame->demangled = fields[4][0] != '\0' ? fields[4] : fields[3];
    }
    frame->file = or_null(fields[5]);
    frame->line = parse_line_number(fields[6]);
    if (frame->line == 0)
        frame->file = NULL;
    frame->inlined_first = (unsigned)names->inlined_count;
    frame->inlined_count = 0;
    names->count++;
    return 0;
}

static int parse_inlined(struct resolved_names *names, char *fields[], int count)
{
    if (count != 4 || names->count == 0 || names->inlined_count == RESOLVED_INLINED_MAX)
        return -1;
    struct inlined_frame *inlined = &names->inlined[names->inlined_count++];
    inlined->function = or_null(fields[1]);
    inlined->file = or_null(fields[2]);
    inlined->line = parse_line_number(fields[3]);
    names->frames[names->count - 1].inlined_count++;
    return 0;
}

int resolved_names_parse(struct resolved_names *names)
{
    names->count = 0;
    names->inlined_count = 0;
    size_t at = 0;
    while (at < names->answer_length) {
        char *line = names->answer + at;
        char *end = memchr(line, '\n', names->answer_length - at);
        if (end == NULL)
            return -EBADMSG; /* cut short */
        *end = '\0';
        at = (size_t)(end - names->answer) + 1;
        if (strcmp(line, "end") == 0)
            return 0;
        char *fields[FIELDS_MAX];
        int count = split_fields(line, fields);
        int result = -1;
        if (count > 0 && strcmp(fields[0], "F") == 0)
            result = parse_frame(names, fields, count);
        else if (count > 0 && strcmp(fields[0], "I") == 0)
            result = parse_inlined(names, fields, count);
        if (result < 0)
            return -EBADMSG;
    }
    return -EBADMSG;
}

static const struct resolved_frame *find(const struct resolved_names *names,
                                         uintptr_t naming_address)
{
    for (int i = 0; names != NULL && i < names->count; i++)
        if (names->frames[i].naming_address == naming_address)
            return &names->frames[i];
    return NULL;
}

static void lay_over(const struct resolved_names *names, uintptr_t naming_address,
                     struct frame_location *location)
{
    const struct resolved_frame *frame = find(names, naming_address);
    if (frame == NULL)
        return;
    if (frame->function != NULL) {
        location->function = frame->function;
        location->function_demangled = frame->demangled;
        location->function_address = frame->function_address;
    }
    if (frame->file == NULL)
        return;
    location->file = frame->file;
    location->line = frame->line;
    location->resolved_inlined = &names->inlined[frame->inlined_first];
    location->resolved_inlined_count = frame->inlined_count;
}

void resolved_lookup_frame(const struct index_snapshot *snapshot,
                           const struct resolved_names *names, uintptr_t address,
                           uintptr_t naming_address, struct frame_location *location)
{
    lookup_frame(snapshot, address, naming_address, 1, location);
    if (names != NULL && names->under != NULL)
        lay_over(names->under, naming_address, location);
    lay_over(names, naming_address, location);
}
