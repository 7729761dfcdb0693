/* leak_suppress.c: LeakSanitizer's suppressions (leak_suppress.h).
 * World: normal (malloc, stdio, backtrace_resolve), after the world was
 * released: only the report's grouping calls it.
 *
 * The matcher is LSan's template language (sanitizer_common's
 * TemplateMatch), which neither fnmatch nor a regex library speaks: an
 * unanchored pattern matches anywhere, '[' is a plain character (C++
 * names have operator[]), only '*', '^' and '$' are special. */
#define _GNU_SOURCE
#include "leak_suppress.h"
#include "heap.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What glibc and the loader keep on purpose, with LSan's reasons. */
static const struct {
    const char *pattern, *why;
} built_in[] = {
    { "*tls_get_addr*", "glibc bug 12650: the dynamic TLS of a dlopen'd module is not freed when "
                        "a thread exits or the module is closed (LSan's default)" },
    { "*pthread_exit*", "pthread_exit loads libgcc_s to unwind the thread and keeps what the "
                        "loading allocated (LSan's default on glibc)" },
};

#define BUILT_IN_COUNT (sizeof built_in / sizeof built_in[0])

/* Does PATTERN[0, LENGTH) (no '*') occur in TEXT? Where, or NULL. */
static const char *find_piece(const char *text, const char *piece, size_t length)
{
    if (length == 0)
        return text;
    for (const char *at = text; *at != '\0'; at++)
        if (strncmp(at, piece, length) == 0)
            return at;
    return NULL;
}

int leak_template_match(const char *pattern, const char *text)
{
    if (text == NULL || text[0] == '\0')
        return 0;
    int at_start = pattern[0] == '^';
    pattern += at_start;
    int after_star = 0;
    while (*pattern != '\0') {
        if (*pattern == '*') {
            pattern++;
            at_start = 0;
            after_star = 1;
            continue;
        }
        if (*pattern == '$')
            return text[0] == '\0' || after_star;
        if (text[0] == '\0')
            return 0;
        /* The piece up to the next '*' or '$', at its first occurrence. */
        size_t piece = strcspn(pattern, "*$");
        const char *found = find_piece(text, pattern, piece);
        if (found == NULL || (at_start && found != text))
            return 0;
        text = found + piece;
        pattern += piece;
        at_start = 0;
        after_star = 0;
    }
    return 1;
}

static int add(struct leak_suppressions *list, size_t *capacity, const char *pattern,
               const char *why)
{
    if (list->count == *capacity) {
        size_t more = *capacity * 2 + 8;
        void *grown = realloc(list->items, more * sizeof *list->items);
        if (grown == NULL)
            return -ENOMEM;
        list->items = grown;
        *capacity = more;
    }
    list->items[list->count++] = (struct leak_suppression){ pattern, why, 0, 0 };
    return 0;
}

static char *read_file(const char *path, int *error)
{
    FILE *file = fopen(path, "re");
    if (file == NULL) {
        *error = errno;
        return NULL;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&text, &size);
    char chunk[4096];
    size_t got;
    while (memory != NULL && (got = fread(chunk, 1, sizeof chunk, file)) > 0)
        fwrite(chunk, 1, got, memory);
    if (ferror(file))
        *error = EIO;
    fclose(file);
    if (memory == NULL || fclose(memory) != 0) {
        *error = ENOMEM;
        free(text);
        return NULL;
    }
    return text;
}

/* "leak:PATTERN" lines; '#' comments and blank lines skipped. */
static int parse(struct leak_suppressions *list, size_t *capacity)
{
    for (char *line = list->text, *next; line != NULL; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        line += strspn(line, " \t");
        size_t length = strlen(line);
        while (length > 0 && (line[length - 1] == ' ' || line[length - 1] == '\t' ||
                              line[length - 1] == '\r'))
            line[--length] = '\0';
        if (length == 0 || line[0] == '#')
            continue;
        if (strncmp(line, "leak:", 5) != 0 || line[5] == '\0') {
            list->unknown++;
            continue;
        }
        if (add(list, capacity, line + 5, NULL) < 0)
            return -ENOMEM;
    }
    return 0;
}

int leak_suppressions_load(struct leak_suppressions *list, const char *path)
{
    size_t capacity = 0;
    memset(list, 0, sizeof *list);
    for (size_t i = 0; i < BUILT_IN_COUNT; i++)
        if (add(list, &capacity, built_in[i].pattern, built_in[i].why) < 0)
            return -ENOMEM;
    if (path == NULL || path[0] == '\0')
        return 0;
    list->text = read_file(path, &list->error);
    if (list->text == NULL)
        return list->error == ENOMEM ? -ENOMEM : 0;
    return parse(list, &capacity);
}

void leak_suppressions_free(struct leak_suppressions *list)
{
    free(list->items);
    free(list->text);
    memset(list, 0, sizeof *list);
}

static int frame_matches(const char *pattern, const struct backtrace_frame *frame)
{
    return leak_template_match(pattern, frame->function) ||
           leak_template_match(pattern, frame->file) ||
           leak_template_match(pattern, frame->module);
}

static struct leak_suppression *first_match(struct leak_suppressions *list,
                                            const struct backtrace_frame *frame)
{
    for (size_t s = 0; s < list->count; s++)
        if (frame_matches(list->items[s].pattern, frame))
            return &list->items[s];
    return NULL;
}

int leak_suppressions_match(struct leak_suppressions *list, const stack_id *stacks,
                            size_t count, struct leak_suppression **matches)
{
    for (size_t i = 0; i < count; i++)
        matches[i] = NULL;
    if (count == 0 || list->count == 0)
        return 0;
    /* Every stack's frames in one buffer; OWNER says whose each is. */
    void **addresses = malloc(count * STACK_DEPOT_MAX_FRAMES * sizeof *addresses);
    size_t *owner = malloc(count * STACK_DEPOT_MAX_FRAMES * sizeof *owner);
    if (addresses == NULL || owner == NULL) {
        free(addresses);
        free(owner);
        return -ENOMEM;
    }
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t thread;
        int frames = heap_stack_frames(stacks[i], &thread, addresses + total,
                                       STACK_DEPOT_MAX_FRAMES);
        for (int f = 0; f < frames; f++)
            owner[total + (size_t)f] = i;
        total += (size_t)(frames > 0 ? frames : 0);
    }
    struct backtrace_frame *frames = NULL;
    int resolved = total > 0 ? backtrace_resolve(addresses, (int)total, 0, &frames) : 0;
    /* Frames come in the buffer's order: each stack's first match is its
     * innermost matching frame. */
    for (int f = 0; f < resolved; f++) {
        size_t stack = owner[frames[f].index];
        if (matches[stack] == NULL)
            matches[stack] = first_match(list, &frames[f]);
    }
    free(frames);
    free(addresses);
    free(owner);
    return resolved < 0 ? -ENOMEM : 0;
}
