/* report_text.c: the report for people: the stacks with the most bytes
 * first, each frame as "function at file:line (module+0xoffset)".
 * World: normal (stdio). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>

void report_summary_write(FILE *out, const struct leak_report *report)
{
    const struct input_counts *counts = &report->heap->counts;
    fprintf(out, "%" PRIu64 " bytes in %" PRIu64 " blocks not freed, from %zu stacks (%" PRIu64
            " events, %" PRIu64 " malformed lines)\n", report->sites->bytes,
            report->sites->blocks, report->sites->count, counts->events, counts->malformed);
}

static void write_signed_offset(FILE *out, int64_t offset)
{
    uint64_t magnitude = offset < 0 ? -(uint64_t)offset : (uint64_t)offset;
    fprintf(out, "%c0x%" PRIx64, offset < 0 ? '-' : '+', magnitude);
}

/* A frame not placed in a module, in the input's own shape. */
static void write_runtime_frame(FILE *out, const struct frame_description *frame)
{
    if (frame->module != NULL)
        fprintf(out, "%s:", frame->module);
    if (frame->function != NULL) {
        fprintf(out, "(%s", frame->function);
        write_signed_offset(out, frame->function_offset);
        putc(')', out);
    }
    fprintf(out, "[0x%" PRIx64 "]", frame->offset);
}

static void write_frame(FILE *out, const struct frame_description *frame)
{
    if (frame->runtime) {
        write_runtime_frame(out, frame);
        return;
    }
    if (frame->function == NULL && frame->file == NULL) {
        fprintf(out, "%s+0x%" PRIx64, frame->module, frame->offset);
        return;
    }
    fputs(frame->function ? frame->function : "??", out);
    if (frame->file != NULL)
        fprintf(out, " at %s:%u", frame->file, frame->line);
    fprintf(out, " (%s+0x%" PRIx64 ")", frame->module, frame->offset);
}

static int write_site(FILE *out, const struct leak_report *report, const struct site *site)
{
    uint32_t depth;
    const uint32_t *frames = stack_table_frames(&report->heap->stacks, site->stack, &depth);
    uint32_t shown = report_frames_shown(report, depth);

    fprintf(out, "\n%" PRIu64 " bytes in %" PRIu64 " blocks allocated at:\n", site->bytes,
            site->blocks);
    if (depth == 0)
        fputs("    (no caller recorded)\n", out);
    for (uint32_t i = 0; i < shown; i++) {
        const struct frame_description *frame = symbolizer_describe(report->symbolizer, frames[i]);
        if (frame == NULL)
            return -ENOMEM;
        fprintf(out, "    #%" PRIu32 " ", i);
        write_frame(out, frame);
        putc('\n', out);
    }
    if (shown < depth)
        fprintf(out, "    (%" PRIu32 " more frames)\n", depth - shown);
    return 0;
}

static void write_rest(FILE *out, const struct leak_report *report, size_t shown)
{
    uint64_t bytes = 0, blocks = 0;
    size_t rest = report->sites->count - shown;

    if (rest == 0)
        return;
    for (size_t i = shown; i < report->sites->count; i++) {
        uint64_t size = report->sites->sites[i].bytes;
        bytes = bytes + size < bytes ? UINT64_MAX : bytes + size;
        blocks += report->sites->sites[i].blocks;
    }
    fprintf(out, "\n(%zu more stacks: %" PRIu64 " bytes in %" PRIu64
            " blocks; --stacks 0 shows all)\n", rest, bytes, blocks);
}

int report_text_write(FILE *out, const struct leak_report *report)
{
    size_t shown = report_stacks_shown(report);

    if (report->sites->count == 0) {
        fputs("No memory leaks.\n", out);
    } else {
        fprintf(out, "Memory not freed: %" PRIu64 " bytes in %" PRIu64 " blocks, from %zu stacks\n",
                report->sites->bytes, report->sites->blocks, report->sites->count);
        for (size_t i = 0; i < shown; i++)
            if (write_site(out, report, &report->sites->sites[i]) < 0)
                return -ENOMEM;
        write_rest(out, report, shown);
        putc('\n', out);
    }
    report_summary_write(out, report);
    return 0;
}
