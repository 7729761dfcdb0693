/* fuzz_trace_file.c: libFuzzer over the leak tool's whole trace path, as
 * execinfo_ex_leaks runs it (tools/leaks/main.c): lines read by
 * line_reader, replayed into a heap_snapshot, grouped by stack and written
 * as text and as JSON, symbolizing the modules the trace names. Any bytes
 * give a report or messages, never a crash, a leak or a hang. */
#include "heap_snapshot.h"
#include "line_reader.h"
#include "report.h"
#include "sites.h"
#include "symbolize.h"
#include "trace_replay.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *sink(void)
{
    static FILE *null;
    if (null == NULL && (null = fopen("/dev/null", "w")) == NULL)
        abort();
    return null;
}

static void replay_all(FILE *input, struct heap_snapshot *heap)
{
    struct line_reader reader;
    struct trace_replay replay;
    struct line line;

    if (line_reader_init(&reader, input) < 0)
        abort();
    trace_replay_init(&replay, heap, "fuzz", sink());
    while (line_reader_next(&reader, &line) == 1)
        if (trace_replay_line(&replay, line.text, line.length, line.number, line.too_long) < 0)
            abort();
    trace_replay_finish(&replay);
    trace_replay_free(&replay);
    line_reader_free(&reader);
}

static void write_reports(const struct heap_snapshot *heap)
{
    struct sites sites;
    struct symbolizer symbolizer;

    if (sites_group(heap, &sites) < 0 || symbolizer_init(&symbolizer, &heap->frames) < 0)
        abort();
    struct leak_report report = { heap, &sites, &symbolizer, 8, 8 };
    if (report_text_write(sink(), &report) < 0 || report_json_write(sink(), &report) < 0)
        abort();
    report_summary_write(sink(), &report);
    symbolizer_free(&symbolizer);
    sites_free(&sites);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct heap_snapshot heap;
    FILE *input = fmemopen((void *)data, size, "r");

    if (size == 0 || input == NULL) {
        if (input != NULL)
            fclose(input);
        return 0;
    }
    if (heap_snapshot_init(&heap) < 0)
        abort();
    replay_all(input, &heap);
    fclose(input);
    write_reports(&heap);
    heap_snapshot_free(&heap);
    return 0;
}
