/* heap_summary.c: the closing line of a heap report,
 * "SUMMARY: execinfo_ex: KIND FILE:LINE in FUNCTION", after ASan's: the
 * one line a person or a CI log grep reads first.
 * World: signal-safe (written inside free() and in the crash handler).
 *
 * The place named: the bad access where a stack of it is known, else the
 * call that freed the block (what a use after free or a double free
 * points back to), else, for an overflow, the call that allocated it.
 * Within that stack, the first frame of the user's own code: the first
 * with a line outside /usr (the standard library's headers inline into
 * the program), else the first with a line, else the first frame.
 *
 * The core library exports no signal-safe "name this address" call, only
 * backtrace_print_fd; so each candidate frame is printed into a pipe of
 * our own and read back (pipe2, read and write are raw syscalls). */
#define _GNU_SOURCE
#include "heap_report.h"
#include "heap.h"
#include "execinfo_ex.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define SUMMARY_FRAMES 64
#define LINE_MAX_READ 1024

struct frame_words {
    char line[LINE_MAX_READ];
    const char *function, *source;   /* into line, NUL-ended; NULL if none */
};

/* "module(function+0x1a) [0xaddr] at file:line": the function and the
 * "file:line" as two strings in LINE. */
static void frame_words_parse(struct frame_words *words)
{
    char *line = words->line;
    words->function = NULL;
    words->source = NULL;
    char *at = strstr(line, "] at ");
    if (at != NULL) {
        words->source = at + 5;
        at[1] = '\0';
    }
    char *open = strchr(line, '(');
    char *plus = open != NULL ? strstr(open, "+0x") : NULL;
    if (open != NULL && plus != NULL && plus > open + 1) {
        *plus = '\0';
        words->function = open + 1;
    }
}

/* Frame ADDRESS printed through the pipe and read back into WORDS->line,
 * not yet parsed. */
static int frame_words_read(int pipe_fds[2], void *address, struct frame_words *words)
{
    backtrace_print_fd(&address, 1, 0, pipe_fds[1]);
    ssize_t got = read(pipe_fds[0], words->line, sizeof words->line - 1);
    if (got <= 0)
        return 0;
    /* A longer line: the rest is drained, the start is enough to name it. */
    char drain[256];
    while (read(pipe_fds[0], drain, sizeof drain) > 0)
        ;
    words->line[got] = '\0';
    char *end = strchr(words->line, '\n');
    if (end != NULL)
        *end = '\0';
    return 1;
}

static int user_source(const char *source)
{
    return source != NULL && strncmp(source, "/usr/", 5) != 0;
}

/* The stack the summary names (see the top). */
static stack_id summary_stack(const struct heap_error_facts *facts)
{
    if (facts->access_stack != 0)
        return facts->access_stack;
    int overflow = facts->kind == HEAP_OVERFLOW || facts->kind == HEAP_UNDERFLOW;
    if (overflow && facts->alloc_stack != 0)
        return facts->alloc_stack;
    if (heap_report_found_at_call(facts))
        return facts->here;     /* the free that found it */
    return facts->free_stack != 0 ? facts->free_stack : facts->alloc_stack;
}

/* The chosen frame's words into BEST; 0 when the stack is unknown. */
static int summary_frame(const struct heap_error_facts *facts, struct frame_words *best)
{
    void *frames[SUMMARY_FRAMES];
    uint32_t thread;
    int count = heap_report_frames(summary_stack(facts), &thread, frames, SUMMARY_FRAMES);
    if (count <= 0)
        return 0;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return 0;
    struct frame_words words, probe;
    int found = 0, with_line = 0, any = 0;
    for (int i = 0; i < count && !found; i++) {
        if (!frame_words_read(pipe_fds, frames[i], &words))
            continue;
        probe = words;
        frame_words_parse(&probe);
        if (user_source(probe.source)) {
            *best = words;
            found = 1;
        } else if (!any || (!with_line && probe.source != NULL)) {
            *best = words;
            with_line = probe.source != NULL;
        }
        any = 1;
    }
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (any)
        frame_words_parse(best);
    return any;
}

static size_t append(char *buffer, size_t size, size_t used, const char *text)
{
    size_t length = strlen(text);
    if (used + length >= size)
        length = used + 1 < size ? size - used - 1 : 0;
    memcpy(buffer + used, text, length);
    buffer[used + length] = '\0';
    return used + length;
}

void heap_summary(char *buffer, size_t size, const struct heap_error_facts *facts)
{
    size_t used = append(buffer, size, 0, heap_error_name(facts->kind));
    struct frame_words best;
    if (!summary_frame(facts, &best))
        return;
    if (best.source != NULL) {
        used = append(buffer, size, used, " ");
        used = append(buffer, size, used, best.source);
    }
    if (best.function != NULL) {
        used = append(buffer, size, used, " in ");
        append(buffer, size, used, best.function);
    }
}
