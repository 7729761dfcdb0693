/* trace_reader.h: one line of an mtrace file (docs/MTRACE.md, and glibc's
 * own writer's shapes) into an event. Pure functions over the line's bytes:
 * a line may hold anything, NUL bytes included. */
#ifndef EXECINFO_EX_LEAKS_TRACE_READER_H
#define EXECINFO_EX_LEAKS_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

enum trace_line_kind {
    TRACE_NOTHING,        /* empty, "= Start", "= End", a "#" comment */
    TRACE_ALLOCATE,       /* + PTR SIZE (PTR 0: a failed allocation, glibc's "(nil)") */
    TRACE_FREE,           /* - PTR */
    TRACE_REALLOC_FROM,   /* < OLD */
    TRACE_REALLOC_TO,     /* > NEW SIZE */
    TRACE_REALLOC_FAILED, /* ! PTR [SIZE] */
    TRACE_STACK,          /* # stack FRAME... */
    TRACE_MALFORMED,
};

struct trace_line {
    enum trace_line_kind kind;
    uint64_t pointer, size;
    const char *where;          /* the caller, "@ WHERE"; NULL when absent */
    size_t where_length;
    struct frame where_frame;   /* WHERE parsed (slices of the line) */
    const char *frames;         /* TRACE_STACK: the frame list, for trace_stack_next */
    size_t frames_length;
};

/* Parse LENGTH bytes of TEXT (no newline; a trailing '\r' is allowed). */
void trace_line_parse(const char *text, size_t length, struct trace_line *out);

/* Parse one frame, the whole of TEXT: MODULE:[0xREL], PATH:(SYM+0xOFF)[0xADDR],
 * PATH:[0xADDR] (taken as MODULE:[0xREL]) or [0xADDR]. Returns 0 or -1. */
int trace_frame_parse(const char *text, size_t length, struct frame *out);

/* The next frame of a TRACE_STACK list at *CURSOR (before END): its text
 * in *KEY and *KEY_LENGTH, parsed into *FRAME. Returns 1, 0 after the last
 * frame, or -1 if the list is malformed there. */
int trace_stack_next(const char **cursor, const char *end, const char **key,
                     size_t *key_length, struct frame *frame);

#endif
