/* report.h: "Memory not freed", as text, one summary line, or JSON, from
 * a heap_snapshot's sites. Independent of the input kind. */
#ifndef EXECINFO_EX_LEAKS_REPORT_H
#define EXECINFO_EX_LEAKS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "heap_snapshot.h"
#include "sites.h"
#include "symbolize.h"

struct leak_report {
    const struct heap_snapshot *heap;
    const struct sites *sites;
    struct symbolizer *symbolizer;
    size_t stack_limit;   /* stacks shown; 0: all */
    size_t frame_limit;   /* frames shown per stack; 0: all */
};

static inline size_t report_stacks_shown(const struct leak_report *report)
{
    size_t count = report->sites->count;
    return report->stack_limit && report->stack_limit < count ? report->stack_limit : count;
}

static inline uint32_t report_frames_shown(const struct leak_report *report, uint32_t depth)
{
    size_t limit = report->frame_limit;
    return limit && limit < depth ? (uint32_t)limit : depth;
}

/* Each returns 0, or -ENOMEM when a module's symbols could not be read
 * into memory. Normal world (stdio, files). */
int report_text_write(FILE *out, const struct leak_report *report);
int report_json_write(FILE *out, const struct leak_report *report);
/* "N bytes in M blocks not freed, from K stacks (E events, X malformed lines)" */
void report_summary_write(FILE *out, const struct leak_report *report);

#endif
