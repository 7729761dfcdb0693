/* report_json.c: the report as one JSON object, "execinfo_ex leaks 1"
 * (man 1 execinfo_ex_leaks).
 * World: normal (stdio). */
#include "report.h"
#include "json_escape.h"

#include <errno.h>
#include <inttypes.h>

static void write_frame(FILE *out, const struct frame_description *frame)
{
    fputs("{\"module\":", out);
    json_escape_write(out, frame->module);
    fprintf(out, ",\"offset\":\"0x%" PRIx64 "\",\"function\":", frame->offset);
    json_escape_write(out, frame->function);
    fputs(",\"mangled\":", out);
    json_escape_write(out, frame->mangled);
    fputs(",\"file\":", out);
    json_escape_write(out, frame->file);
    if (frame->file != NULL)
        fprintf(out, ",\"line\":%u}", frame->line);
    else
        fputs(",\"line\":null}", out);
}

static int write_site(FILE *out, const struct leak_report *report, const struct site *site)
{
    uint32_t depth;
    const uint32_t *frames = stack_table_frames(&report->heap->stacks, site->stack, &depth);
    uint32_t shown = report_frames_shown(report, depth);

    fprintf(out, "{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"depth\":%" PRIu32
            ",\"frames\":[", site->bytes, site->blocks, depth);
    for (uint32_t i = 0; i < shown; i++) {
        const struct frame_description *frame = symbolizer_describe(report->symbolizer, frames[i]);
        if (frame == NULL)
            return -ENOMEM;
        if (i > 0)
            putc(',', out);
        write_frame(out, frame);
    }
    fputs("]}", out);
    return 0;
}

int report_json_write(FILE *out, const struct leak_report *report)
{
    const struct input_counts *counts = &report->heap->counts;
    size_t shown = report_stacks_shown(report);

    fprintf(out, "{\"format\":\"execinfo_ex leaks 1\",\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64
            ",\"stack_count\":%zu,\"stacks\":[", report->sites->bytes, report->sites->blocks,
            report->sites->count);
    for (size_t i = 0; i < shown; i++) {
        if (i > 0)
            putc(',', out);
        if (write_site(out, report, &report->sites->sites[i]) < 0)
            return -ENOMEM;
    }
    fprintf(out, "],\"events\":%" PRIu64 ",\"malformed\":%" PRIu64
            ",\"frees_never_allocated\":%" PRIu64 ",\"duplicate_allocations\":%" PRIu64 "}\n",
            counts->events, counts->malformed, counts->frees_never_allocated,
            counts->duplicate_allocations);
    return 0;
}
