/* options.c: the options parser.
 * World: normal (snprintf for the error message). */
#include "options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void options_defaults(struct options *options)
{
    options->lines = LINES_MAIN;
    options->line_memory = (size_t)64 << 20;
}

int options_parse_size(const char *text, size_t length, size_t *out)
{
    size_t value = 0, i = 0;

    if (length == 0)
        return -EINVAL;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; i++) {
        if (value > (SIZE_MAX - 9) / 10)
            return -EINVAL;
        value = value * 10 + (size_t)(text[i] - '0');
    }
    if (i == 0)
        return -EINVAL;
    if (i + 1 == length) {
        unsigned shift;
        switch (text[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -EINVAL;
        }
        if (value > (SIZE_MAX >> shift))
            return -EINVAL;
        value <<= shift;
    } else if (i != length) {
        return -EINVAL;
    }
    *out = value;
    return 0;
}

static int equals(const char *text, size_t length, const char *word)
{
    return strlen(word) == length && memcmp(text, word, length) == 0;
}

static int parse_lines(struct options *options, const char *value, size_t length)
{
    if (equals(value, length, "none"))
        options->lines = LINES_NONE;
    else if (equals(value, length, "main"))
        options->lines = LINES_MAIN;
    else if (equals(value, length, "all"))
        options->lines = LINES_ALL;
    else
        return -EINVAL;
    return 0;
}

static int parse_one(struct options *options, const char *item, size_t length,
                     char *error, size_t error_size)
{
    const char *equal = memchr(item, '=', length);
    if (equal == NULL) {
        snprintf(error, error_size, "execinfo_ex: option '%.*s' has no '=value'",
                 (int)length, item);
        return -EINVAL;
    }
    size_t name_length = (size_t)(equal - item), value_length = length - name_length - 1;
    const char *value = equal + 1;
    int result;

    if (equals(item, name_length, "lines"))
        result = parse_lines(options, value, value_length);
    else if (equals(item, name_length, "line_memory"))
        result = options_parse_size(value, value_length, &options->line_memory);
    else {
        snprintf(error, error_size, "execinfo_ex: unknown option '%.*s' (known: lines, line_memory)",
                 (int)name_length, item);
        return -EINVAL;
    }
    if (result < 0)
        snprintf(error, error_size, "execinfo_ex: bad value '%.*s' for option '%.*s'",
                 (int)value_length, value, (int)name_length, item);
    return result;
}

int options_parse(struct options *options, const char *text, char *error, size_t error_size)
{
    if (error_size > 0)
        error[0] = '\0';
    if (text == NULL)
        return 0;
    while (*text != '\0') {
        const char *end = strchr(text, ':');
        size_t length = end ? (size_t)(end - text) : strlen(text);
        if (length > 0) {
            int result = parse_one(options, text, length, error, error_size);
            if (result < 0)
                return result;
        }
        text += length;
        if (*text == ':')
            text++;
    }
    return 0;
}
