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
 * the program), else the first with a line, else the first frame; a
 * frame's inlined calls are frames of their own, innermost first, so an
 * access inside an inlined function is named by that function's line.
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
#define TEXT_MAX_READ 1024
#define LINE_MAX_READ 1024
#define INLINED_PREFIX "    inlined: "

_Static_assert(HEAP_ACCESS_FRAMES <= SUMMARY_FRAMES, "the access stack fits");

/* One line of backtrace_print_fd's output: a frame, "module(function+0x1a)
 * [0xaddr] at file:line" ("module(+0x1a) [0xaddr]" without a name), or an inlined call inside the frame that
 * follows it, "    inlined: function at file:line". */
struct frame_words {
    char line[LINE_MAX_READ];
    int function, source;   /* offsets into line of NUL-ended words; -1: none */
};

static const char *word(const struct frame_words *words, int offset)
{
    return offset >= 0 ? words->line + offset : NULL;
}

static char *last_of(char *text, const char *needle)
{
    char *last = NULL;
    for (char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle))
        last = at;
    return last;
}

static void inlined_words_parse(struct frame_words *words)
{
    char *function = words->line + strlen(INLINED_PREFIX);
    char *at = last_of(function, " at ");
    if (at != NULL) {
        words->source = (int)(at + 4 - words->line);
        *at = '\0';
    }
    if (function[0] != '\0' && strcmp(function, "??") != 0)
        words->function = (int)(function - words->line);
}

/* The function and the "file:line" as two words in LINE. */
static void frame_words_parse(struct frame_words *words)
{
    char *line = words->line;
    words->function = -1;
    words->source = -1;
    if (strncmp(line, INLINED_PREFIX, strlen(INLINED_PREFIX)) == 0) {
        inlined_words_parse(words);
        return;
    }
    char *at = strstr(line, "] at ");
    if (at != NULL) {
        words->source = (int)(at + 5 - line);
        at[1] = '\0';
    }
    /* "(function+0x1a) [" or, at the function's first byte, "+0": the
     * offset's sign is the last '+' or '-' before ") [" (a C++ name may
     * hold either, and parentheses, before it). */
    char *open = strchr(line, '(');
    char *close = open != NULL ? strstr(open, ") [") : NULL;
    char *sign = close;
    while (sign != NULL && sign > open && *sign != '+' && *sign != '-')
        sign--;
    if (sign != NULL && sign > open + 1) {
        *sign = '\0';
        words->function = (int)(open + 1 - line);
    }
}

/* Frame ADDRESS printed through the pipe and read back into TEXT: its
 * inlined calls' lines, innermost first, then its own. FLAGS as for
 * backtrace_print_fd. */
static int frame_text_read(int pipe_fds[2], void *address, int flags, char text[TEXT_MAX_READ])
{
    backtrace_print_fd(&address, 1, flags, pipe_fds[1]);
    ssize_t got = read(pipe_fds[0], text, TEXT_MAX_READ - 1);
    if (got <= 0)
        return 0;
    /* Longer: the rest is drained, the start is enough to name it. */
    char drain[256];
    while (read(pipe_fds[0], drain, sizeof drain) > 0)
        ;
    text[got] = '\0';
    return 1;
}

static int user_source(const struct frame_words *words)
{
    const char *source = word(words, words->source);
    return source != NULL && strncmp(source, "/usr/", 5) != 0;
}

/* The stack the summary names (see the top), when no access was seen. */
static stack_id summary_stack(const struct heap_error_facts *facts)
{
    int overflow = facts->kind == HEAP_OVERFLOW || facts->kind == HEAP_UNDERFLOW;
    if (overflow && facts->alloc_stack != 0)
        return facts->alloc_stack;
    if (heap_report_found_at_call(facts))
        return facts->here;     /* the free that found it */
    return facts->free_stack != 0 ? facts->free_stack : facts->alloc_stack;
}

/* Its frames into FRAMES; *FIRST_IS_PC when frames[0] is the faulting
 * instruction itself (the access's), whose line is looked up exactly. */
static int summary_frames(const struct heap_error_facts *facts, void **frames, int *first_is_pc)
{
    const struct heap_access *access = facts->access;
    *first_is_pc = 0;
    if (access != NULL && access->count > 0) {
        memcpy(frames, access->frames, (size_t)access->count * sizeof frames[0]);
        *first_is_pc = access->first_is_pc;
        return access->count;
    }
    uint32_t thread;
    return heap_report_frames(summary_stack(facts), &thread, frames, SUMMARY_FRAMES);
}

/* The search's state: the best line so far, and how good it is. */
struct summary_choice {
    struct frame_words best;
    int found, with_line, any;
};

static void summary_consider(struct summary_choice *choice, const char *line, size_t length)
{
    struct frame_words probe;
    if (length >= sizeof probe.line)
        length = sizeof probe.line - 1;
    memcpy(probe.line, line, length);
    probe.line[length] = '\0';
    frame_words_parse(&probe);
    if (user_source(&probe)) {
        choice->best = probe;
        choice->found = 1;
    } else if (!choice->any || (!choice->with_line && probe.source >= 0)) {
        choice->best = probe;
        choice->with_line = probe.source >= 0;
    }
    choice->any = 1;
}

/* Each line of TEXT, innermost first, until one is the user's. */
static void summary_consider_text(struct summary_choice *choice, const char *text)
{
    for (const char *line = text; *line != '\0' && !choice->found;) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        summary_consider(choice, line, length);
        line = end != NULL ? end + 1 : line + length;
    }
}

/* The chosen line, parsed, into CHOICE->best; 0 when the stack is unknown. */
static int summary_frame(const struct heap_error_facts *facts, struct summary_choice *choice)
{
    void *frames[SUMMARY_FRAMES];
    int first_is_pc;
    int count = summary_frames(facts, frames, &first_is_pc);
    if (count <= 0)
        return 0;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return 0;
    char text[TEXT_MAX_READ];
    choice->found = choice->with_line = choice->any = 0;
    for (int i = 0; i < count && !choice->found; i++) {
        int flags = i == 0 && first_is_pc ? BACKTRACE_FIRST_IS_PC : 0;
        if (frame_text_read(pipe_fds, frames[i], flags, text))
            summary_consider_text(choice, text);
    }
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return choice->any;
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
    struct summary_choice choice;
    if (!summary_frame(facts, &choice))
        return;
    const struct frame_words *best = &choice.best;
    if (best->source >= 0) {
        used = append(buffer, size, used, " ");
        used = append(buffer, size, used, word(best, best->source));
    }
    if (best->function >= 0) {
        used = append(buffer, size, used, " in ");
        append(buffer, size, used, word(best, best->function));
    }
}
