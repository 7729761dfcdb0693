/* line_reader.c: fread in 1 MiB blocks, lines found with memchr, so that
 * NUL bytes, CRLF, a missing last newline and huge lines are all ordinary.
 * World: normal (an ordinary program). */
#define _GNU_SOURCE
#include "line_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LINE_READER_BUFFER (1024 * 1024)

int line_reader_init(struct line_reader *reader, FILE *file)
{
    memset(reader, 0, sizeof *reader);
    reader->file = file;
    reader->capacity = LINE_READER_BUFFER;
    reader->buffer = malloc(reader->capacity);
    return reader->buffer ? 0 : -ENOMEM;
}

void line_reader_push_back(struct line_reader *reader, const void *bytes, size_t length)
{
    memcpy(reader->buffer + reader->end, bytes, length);
    reader->end += length;
}

void line_reader_free(struct line_reader *reader)
{
    free(reader->buffer);
    reader->buffer = NULL;
}

/* Keep the unread bytes, fill the rest of the buffer. Returns 0 or -errno. */
static int refill(struct line_reader *reader)
{
    size_t unread = reader->end - reader->start;
    memmove(reader->buffer, reader->buffer + reader->start, unread);
    reader->start = 0;
    reader->end = unread;
    size_t got = fread(reader->buffer + unread, 1, reader->capacity - unread, reader->file);
    reader->end += got;
    if (got == 0) {
        if (ferror(reader->file))
            return errno ? -errno : -EIO;
        reader->at_eof = 1;
    }
    return 0;
}

static void take_line(struct line_reader *reader, size_t length, size_t consumed,
                      int too_long, struct line *line)
{
    line->text = reader->buffer + reader->start;
    line->length = length;
    line->number = ++reader->number;
    line->too_long = too_long;
    reader->start += consumed;
    reader->bytes_done += consumed;
}

/* Drop bytes up to and with the next newline; 1 once it is found. */
static int skip_rest(struct line_reader *reader)
{
    const char *start = reader->buffer + reader->start;
    const char *newline = memchr(start, '\n', reader->end - reader->start);
    size_t dropped = newline ? (size_t)(newline + 1 - start) : reader->end - reader->start;
    reader->start += dropped;
    reader->bytes_done += dropped;
    if (newline != NULL)
        reader->skipping = 0;
    return newline != NULL;
}

int line_reader_next(struct line_reader *reader, struct line *line)
{
    for (;;) {
        if (reader->skipping && !skip_rest(reader)) {
            if (reader->at_eof)
                return 0;
        } else {
            const char *start = reader->buffer + reader->start;
            size_t unread = reader->end - reader->start;
            const char *newline = memchr(start, '\n', unread);
            if (newline != NULL) {
                size_t length = (size_t)(newline - start);
                take_line(reader, length, length + 1, length > LINE_READER_MAX_LINE, line);
                return 1;
            }
            if (unread > LINE_READER_MAX_LINE) {
                take_line(reader, LINE_READER_MAX_LINE, unread, 1, line);
                reader->skipping = 1;
                return 1;
            }
            if (reader->at_eof) {
                if (unread == 0)
                    return 0;
                take_line(reader, unread, unread, 0, line);
                return 1;
            }
        }
        int status = refill(reader);
        if (status < 0)
            return status;
    }
}
