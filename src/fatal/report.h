/* report.h: a crash report from collected facts, as text or JSON. */
#ifndef EXECINFO_EX_REPORT_H
#define EXECINFO_EX_REPORT_H

#include "crash_facts.h"
#include "../threads/thread_facts.h"
#include "../base/text_out.h"
#include "../symbolize/index.h"
#include "../symbolize/resolved_names.h"

struct second_stage;

struct report_settings {
    int registers;   /* include the registers */
    int modules;     /* include the modules of the trace, with build-ids */
    /* The crash lead (report_deliver.h), written first; NULL: none. */
    int (*lead)(int fd, void *context);
    void *lead_context;
    /* The second stage's outcome and names (second_stage.h); NULL: none. */
    const struct second_stage *stage;
};

/* Call the lead of SETTINGS, OUT flushed first: 1 when it asks for the
 * trace to be left out. Signal-safe. */
int report_call_lead(struct text_out *out, const struct report_settings *settings);

/* Pure functions of FACTS, the other THREADS (NULL: none gathered,
 * threads=1) and the index SNAPSHOT (may be NULL): they only write to
 * OUT. Signal-safe. */
void report_text(struct text_out *out, const struct crash_facts *facts,
                 const struct thread_set *threads, const struct index_snapshot *snapshot,
                 const struct report_settings *settings);
void report_json(struct text_out *out, const struct crash_facts *facts,
                 const struct thread_set *threads, const struct index_snapshot *snapshot,
                 const struct report_settings *settings);

/* The frames as the report writes them ("#0  ..." with file:line and the
 * inlined calls before each frame). Signal-safe. */
void report_text_frames(struct text_out *out, void *const *frames, const unsigned char *exact,
                        int count, const struct index_snapshot *snapshot,
                        const struct resolved_names *resolved);

/* The other threads, after the crashing thread's part: one section per
 * thread, then how many were left out (report_text_threads.c,
 * report_json_threads.c). Signal-safe. */
void report_text_threads(struct text_out *out, const struct thread_set *threads,
                         const struct index_snapshot *snapshot,
                         const struct resolved_names *resolved);
void report_json_threads(struct text_out *out, const struct crash_facts *facts,
                         const struct thread_set *threads, const struct index_snapshot *snapshot,
                         const struct resolved_names *resolved);

/* The end of each report ("*** end of report", or the closing brace):
 * after the crash callback's part. Signal-safe. */
void report_text_end(struct text_out *out);
void report_json_end(struct text_out *out);

/* The distinct modules of the traces (the crashing thread's, then the
 * others'), in order of first appearance. Returns how many (at most
 * CAPACITY). Signal-safe. */
int report_trace_modules(const struct crash_facts *facts, const struct thread_set *threads,
                         const struct index_snapshot *snapshot,
                         const struct index_module **modules, int capacity);

/* A memory operand as "[rax+rbx*8+0x10]". Signal-safe. */
void report_operand_expression(struct text_out *out, const struct crash_operand *operand);

#endif
