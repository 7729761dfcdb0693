/* trace_replay.h: replay the events of a trace into a heap_snapshot, and
 * say on a stream what does not fit (malformed lines, frees of pointers
 * never allocated, duplicate allocations), the input's bytes escaped. */
#ifndef EXECINFO_EX_LEAKS_TRACE_REPLAY_H
#define EXECINFO_EX_LEAKS_TRACE_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "heap_snapshot.h"

/* Messages of each kind shown before they are only counted. */
#define TRACE_REPLAY_MALFORMED_SHOWN 20
#define TRACE_REPLAY_MISMATCH_SHOWN 10
/* Bytes of a malformed line shown. */
#define TRACE_REPLAY_SHOWN_BYTES 80

/* A malformed line held back until the input proves to be a trace. */
struct trace_replay_held {
    uint64_t number;
    size_t length;
    char text[TRACE_REPLAY_SHOWN_BYTES];
};

struct trace_replay {
    struct heap_snapshot *heap;
    const char *input_name;      /* for messages: the path, or "<stdin>" */
    FILE *messages;
    void (*before_message)(void *context);   /* e.g. erase a progress line; may be NULL */
    void *message_context;
    int pending;                 /* the last line allocated PENDING_POINTER */
    uint64_t pending_pointer, pending_line;
    uint64_t stack_lines;        /* well-formed "# stack" lines */
    int trace_seen;              /* an event or a stack line was replayed */
    /* Malformed lines before the first event or stack line: not shown if
     * the input is no trace at all (a binary file is one message, not 20). */
    struct trace_replay_held held[TRACE_REPLAY_MALFORMED_SHOWN];
    size_t held_count;
    uint32_t *frame_ids;         /* the frames of one "# stack" line */
    size_t frame_capacity;
};

void trace_replay_init(struct trace_replay *replay, struct heap_snapshot *heap,
                       const char *input_name, FILE *messages);
void trace_replay_free(struct trace_replay *replay);

/* Replay line NUMBER (LENGTH bytes of TEXT, without its newline; TOO_LONG:
 * it was cut). Returns 0 or -ENOMEM. Normal world. */
int trace_replay_line(struct trace_replay *replay, const char *text, size_t length,
                      uint64_t number, int too_long);

/* Whether the lines replayed so far look like a trace: some event or
 * "# stack" line, or nothing malformed (an empty trace is a trace). A
 * file of other lines (random bytes, text) is none. */
int trace_replay_is_trace(const struct trace_replay *replay);

/* The totals of what was reported line by line (for an input that is no
 * trace, nothing: the caller says so). */
void trace_replay_finish(struct trace_replay *replay);

#endif
