/* line_reader.h: the lines of a stream, read in large blocks. */
#ifndef EXECINFO_EX_LEAKS_LINE_READER_H
#define EXECINFO_EX_LEAKS_LINE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longer lines are cut: the rest, up to the newline, is skipped. */
#define LINE_READER_MAX_LINE (64 * 1024)

struct line {
    const char *text;     /* not NUL-terminated; may hold NUL bytes */
    size_t length;        /* without the newline */
    uint64_t number;      /* from 1 */
    int too_long;         /* longer than LINE_READER_MAX_LINE: TEXT is its start */
};

struct line_reader {
    FILE *file;
    char *buffer;
    size_t capacity, start, end;
    int at_eof;
    int skipping;         /* inside the rest of a line that was too long */
    uint64_t number;
    uint64_t bytes_done;  /* bytes of the stream consumed by returned lines */
};

/* Read FILE (its position is the caller's). Returns 0 or -ENOMEM. */
int line_reader_init(struct line_reader *reader, FILE *file);

/* LENGTH bytes (at most 4096) that the caller read from FILE already,
 * returned first: the stream is read once. Right after init. */
void line_reader_push_back(struct line_reader *reader, const void *bytes, size_t length);
void line_reader_free(struct line_reader *reader);

/* The next line into *LINE, valid until the next call. Returns 1, 0 at
 * the end of the stream, or a negative errno of a read error. A last line
 * without a newline is a line. Normal world. */
int line_reader_next(struct line_reader *reader, struct line *line);

#endif
