/* leak_report.c: the leak check's two renderers over one leak_facts
 * (docs/HEAP_REPORT.md): text in LeakSanitizer's words, or one JSON
 * object with the same facts.
 * World: signal-safe (the stack buffer writer, the depot and the core
 * library's AS-Safe printing), as the heap report's. */
#define _GNU_SOURCE
#include "leak.h"
#include "heap.h"
#include "heap_report.h"
#include "../base/json_out.h"
#include "../base/text_out.h"
#include "execinfo_ex.h"

#define REPORT_FRAMES 64

static void text_group(struct text_out *out, int fd, const struct leak_group *group)
{
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    text_out_string(out, "\n");
    text_out_string(out, group->direct ? "Direct" : "Indirect");
    text_out_string(out, " leak of ");
    text_out_decimal(out, group->bytes);
    text_out_string(out, " byte(s) in ");
    text_out_decimal(out, group->objects);
    text_out_string(out, " object(s) allocated from:\n");
    text_out_end_line(out);
    int count = heap_stack_frames(group->stack, &thread, frames, REPORT_FRAMES);
    if (count <= 0) {
        text_out_string(out, "    (its stack could not be read from the depot)\n");
        return;
    }
    text_out_flush(out);
    backtrace_print_fd(frames, count, 0, fd);
}

/* The threads the check could not stop: their memory was read as it
 * changed, so a leak may be missed or a block reported that was not. */
static void text_unstopped(struct text_out *out, const struct leak_scan *scan)
{
    if (scan->threads_unstopped == 0)
        return;
    text_out_string(out, "\n*** ");
    text_out_decimal(out, (uint64_t)scan->threads_unstopped);
    text_out_string(out, " thread(s) could not be stopped and were scanned as they ran");
    if (scan->unstopped_unscanned > 0) {
        text_out_string(out, " (");
        text_out_decimal(out, (uint64_t)scan->unstopped_unscanned);
        text_out_string(out, " without their stack, which was not found)");
    }
    text_out_string(out, ":");
    for (int i = 0; i < scan->threads_unstopped && i < LEAK_UNSTOPPED_NAMED; i++) {
        text_out_string(out, i == 0 ? " thread " : ", thread ");
        text_out_decimal(out, (uint64_t)scan->unstopped[i]);
        text_out_string(out, " (");
        text_out_string(out, scan->unstopped_why[i] != NULL ? scan->unstopped_why[i] : "?");
        text_out_string(out, ")");
    }
    text_out_string(out, "\n");
}

/* VALUE right-aligned in WIDTH columns, as LSan's %7zu and %10zu. */
static void padded(struct text_out *out, uint64_t value, size_t width)
{
    char digits[65];
    size_t length = format_unsigned(digits, value, 10);
    for (size_t i = length; i < width; i++)
        text_out_char(out, ' ');
    text_out_bytes(out, digits, length);
}

static int suppressions_used(const struct leak_suppressions *list)
{
    for (size_t i = 0; list != NULL && i < list->count; i++)
        if (list->items[i].objects > 0)
            return 1;
    return 0;
}

/* LSan's table of the suppressions that kept leaks out. */
static void text_suppressions(struct text_out *out, const struct leak_facts *facts)
{
    const struct leak_suppressions *list = facts->suppressions;
    if (list != NULL && list->error != 0) {
        text_out_string(out, "*** suppressions: cannot read ");
        text_out_string(out, facts->suppressions_path);
        text_out_string(out, " (errno ");
        text_out_decimal(out, (uint64_t)list->error);
        text_out_string(out, ")\n");
    }
    if (list != NULL && list->unknown > 0) {
        text_out_string(out, "*** suppressions: ");
        text_out_decimal(out, list->unknown);
        text_out_string(out, " line(s) of a type other than leak: ignored\n");
    }
    if (!suppressions_used(list))
        return;
    text_out_string(out, "-----------------------------------------------------\n"
                         "Suppressions used:\n  count      bytes template\n");
    for (size_t i = 0; i < list->count; i++) {
        if (list->items[i].objects == 0)
            continue;
        padded(out, list->items[i].objects, 7);
        text_out_char(out, ' ');
        padded(out, list->items[i].bytes, 10);
        text_out_char(out, ' ');
        text_out_string(out, list->items[i].pattern);
        text_out_string(out, "\n");
    }
    text_out_string(out, "-----------------------------------------------------\n");
}

void leak_report_text(int fd, const struct leak_facts *facts)
{
    char buffer[1024];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_string(&out, facts->group_count > 0
                              ? "*** execinfo_ex: leak check: detected memory leaks\n"
                              : "*** execinfo_ex: leak check: no leaks\n");
    for (size_t i = 0; i < facts->group_count; i++)
        text_group(&out, fd, &facts->groups[i]);
    text_unstopped(&out, facts->scan);
    if (facts->scan->blocks_missed)
        text_out_string(&out, "*** blocks allocated during the check were not all seen\n");
    if (facts->suppressions != NULL &&
        (suppressions_used(facts->suppressions) || facts->suppressions->error != 0 ||
         facts->suppressions->unknown > 0))
        text_out_string(&out, "\n");
    text_suppressions(&out, facts);
    if (facts->group_count > 0) {
        text_out_string(&out, "\nSUMMARY: execinfo_ex: ");
        text_out_decimal(&out, facts->bytes);
        text_out_string(&out, " byte(s) leaked in ");
        text_out_decimal(&out, facts->objects);
        text_out_string(&out, " allocation(s).\n");
    }
    text_out_flush(&out);
}

static void json_group(struct text_out *out, int fd, const struct leak_group *group, int first)
{
    if (!first)
        text_out_char(out, ',');
    text_out_string(out, "\n{\"kind\":");
    json_string(out, group->direct ? "direct" : "indirect");
    json_key(out, "bytes", 0);
    text_out_decimal(out, group->bytes);
    json_key(out, "objects", 0);
    text_out_decimal(out, group->objects);
    heap_report_json_stack(out, fd, "allocated", group->stack);
    text_out_char(out, '}');
}

static void json_unstopped(struct text_out *out, const struct leak_scan *scan)
{
    json_key(out, "threads_not_stopped", 0);
    text_out_decimal(out, (uint64_t)scan->threads_unstopped);
    json_key(out, "threads_not_stopped_named", 0);
    text_out_char(out, '[');
    for (int i = 0; i < scan->threads_unstopped && i < LEAK_UNSTOPPED_NAMED; i++) {
        text_out_string(out, i == 0 ? "{\"tid\":" : ",{\"tid\":");
        text_out_decimal(out, (uint64_t)scan->unstopped[i]);
        json_key(out, "why", 0);
        json_string(out, scan->unstopped_why[i]);
        text_out_char(out, '}');
    }
    text_out_char(out, ']');
    json_key(out, "threads_without_stack", 0);
    text_out_decimal(out, (uint64_t)scan->unstopped_unscanned);
}

/* "suppressions_used":[{"template","objects","bytes"}...], and the
 * file's error (0: none). */
static void json_suppressions(struct text_out *out, const struct leak_facts *facts)
{
    const struct leak_suppressions *list = facts->suppressions;
    json_key(out, "suppressions_used", 0);
    text_out_char(out, '[');
    int first = 1;
    for (size_t i = 0; list != NULL && i < list->count; i++) {
        if (list->items[i].objects == 0)
            continue;
        text_out_string(out, first ? "{" : ",{");
        first = 0;
        json_key(out, "template", 1);
        json_string(out, list->items[i].pattern);
        json_key(out, "objects", 0);
        text_out_decimal(out, list->items[i].objects);
        json_key(out, "bytes", 0);
        text_out_decimal(out, list->items[i].bytes);
        text_out_char(out, '}');
    }
    text_out_char(out, ']');
    json_key(out, "suppressions_error", 0);
    text_out_decimal(out, list != NULL ? (uint64_t)list->error : 0);
}

void leak_report_json(int fd, const struct leak_facts *facts)
{
    char buffer[1024];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_char(&out, '{');
    json_key(&out, "format", 1);
    json_string(&out, "execinfo_ex leak report 1");
    json_key(&out, "leaked", 0);
    text_out_string(&out, facts->group_count > 0 ? "true" : "false");
    json_key(&out, "leaks", 0);
    text_out_char(&out, '[');
    for (size_t i = 0; i < facts->group_count; i++)
        json_group(&out, fd, &facts->groups[i], i == 0);
    text_out_char(&out, ']');
    json_key(&out, "bytes", 0);
    text_out_decimal(&out, facts->bytes);
    json_key(&out, "objects", 0);
    text_out_decimal(&out, facts->objects);
    json_unstopped(&out, facts->scan);
    json_suppressions(&out, facts);
    json_key(&out, "blocks_missed", 0);
    text_out_string(&out, facts->scan->blocks_missed ? "true" : "false");
    text_out_string(&out, "}\n");
    text_out_flush(&out);
}
