/* fuzz_trace_line.c: libFuzzer over the leak tool's trace line parser
 * (tools/leaks/trace_reader.c): any line is an event or malformed, and
 * every slice it returns lies inside the line. */
#include "trace_reader.h"

#include <stdint.h>
#include <stdlib.h>

static void inside(const uint8_t *data, size_t size, const char *slice, size_t length)
{
    if (slice != NULL && ((const uint8_t *)slice < data || (const uint8_t *)slice + length > data + size))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_line line;
    trace_line_parse((const char *)data, size, &line);
    inside(data, size, line.where, line.where_length);
    if (line.kind == TRACE_STACK) {
        inside(data, size, line.frames, line.frames_length);
        const char *cursor = line.frames, *end = line.frames + line.frames_length, *key;
        size_t key_length;
        struct frame frame;
        for (int i = 0; i < 1000 && trace_stack_next(&cursor, end, &key, &key_length, &frame) > 0; i++)
            inside(data, size, key, key_length);
    }
    return 0;
}
