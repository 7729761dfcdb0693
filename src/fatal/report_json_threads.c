/* report_json_threads.c: "threads", every thread of the JSON report: the
 * crashing (or dumping) one first, then the others by tid, with the same
 * facts as the text report.
 * World: signal-safe (text_out, lookups in the published index).
 * Schema: docs/CRASH_REPORT.md. */
#include "report.h"
#include "signal_names.h"
#include "../base/json_out.h"
#include "../symbolize/frame_json.h"

static void json_reason(struct text_out *out, const struct thread_facts *thread, int timeout_ms)
{
    json_key(out, "reason", 0);
    switch (thread->outcome) {
    case THREAD_READ:
        text_out_string(out, "null");
        return;
    case THREAD_BLOCKS_SIGNALS:
        json_string(out, thread->blocks_all ? "blocks every signal"
                                            : "blocks the signal we ask with (61)");
        return;
    case THREAD_NO_ANSWER:
        text_out_string(out, "\"did not answer within ");
        text_out_decimal(out, (uint64_t)timeout_ms);
        text_out_string(out, " ms\"");
        return;
    case THREAD_EXITED:
    case THREAD_NOT_STOPPED:
        json_string(out, thread_outcome_words(thread->outcome));
        return;
    }
}

static void json_syscall(struct text_out *out, const struct thread_facts *thread)
{
    json_key(out, "syscall", 0);
    if (!thread->have_syscall || thread->outcome == THREAD_READ) {
        text_out_string(out, "null");
        return;
    }
    text_out_char(out, '{');
    json_key(out, "number", 1);
    json_signed(out, thread->syscall);
    json_key(out, "pc", 0);
    json_hex(out, thread->syscall_pc);
    json_key(out, "sp", 0);
    json_hex(out, thread->syscall_sp);
    text_out_char(out, '}');
}

static void json_state(struct text_out *out, char state)
{
    char letter[2] = { state, '\0' };
    json_key(out, "state", 0);
    json_string(out, letter);
    json_key(out, "state_name", 0);
    json_string(out, thread_state_name(state));
}

static void json_other(struct text_out *out, const struct thread_facts *thread, int timeout_ms,
                       const struct index_snapshot *snapshot,
                       const struct resolved_names *resolved)
{
    text_out_string(out, ",{");
    json_key(out, "tid", 1);
    json_signed(out, thread->tid);
    json_key(out, "name", 0);
    json_string(out, thread->name);
    json_state(out, thread->state);
    json_key(out, "crashing", 0);
    text_out_string(out, "false");
    json_key(out, "reporting", 0);
    text_out_string(out, "false");
    json_key(out, "read", 0);
    text_out_string(out, thread->outcome == THREAD_READ ? "true" : "false");
    json_reason(out, thread, timeout_ms);
    json_key(out, "crashed_signal", 0);
    if (thread->crashed_signo != 0)
        json_signed(out, thread->crashed_signo);
    else
        text_out_string(out, "null");
    json_syscall(out, thread);
    json_key(out, "frames", 0);
    frame_json_array_resolved(out, snapshot, resolved, thread->frames, thread->frame_exact,
                              thread->frame_count, 0);
    text_out_char(out, '}');
    text_out_end_line(out);
}

/* The thread that writes the report: the crashing one, or the dumping one. */
static void json_reporting(struct text_out *out, const struct crash_facts *facts,
                          const struct index_snapshot *snapshot,
                          const struct resolved_names *resolved)
{
    text_out_char(out, '{');
    json_key(out, "tid", 1);
    json_signed(out, facts->tid);
    json_key(out, "name", 0);
    json_string(out, facts->thread_name);
    json_state(out, 'R');
    json_key(out, "crashing", 0);
    text_out_string(out, facts->kind == REPORT_CRASH ? "true" : "false");
    json_key(out, "reporting", 0);
    text_out_string(out, "true");
    json_key(out, "read", 0);
    text_out_string(out, "true");
    json_key(out, "reason", 0);
    text_out_string(out, "null");
    json_key(out, "crashed_signal", 0);
    if (facts->kind == REPORT_CRASH)
        json_signed(out, facts->signo);
    else
        text_out_string(out, "null");
    json_key(out, "syscall", 0);
    text_out_string(out, "null");
    json_key(out, "frames", 0);
    frame_json_array_resolved(out, snapshot, resolved, facts->frames, facts->frame_exact,
                              facts->frame_count, 0);
    text_out_char(out, '}');
    text_out_end_line(out);
}

void report_json_threads(struct text_out *out, const struct crash_facts *facts,
                         const struct thread_set *threads, const struct index_snapshot *snapshot,
                         const struct resolved_names *resolved)
{
    json_key(out, "threads_seen", 0);
    json_signed(out, threads->not_gathered != 0 ? 0 : threads->seen);
    json_key(out, "threads_left_out", 0);
    json_signed(out, threads->left_out);
    json_key(out, "threads_of_qemu", 0);
    json_signed(out, threads->emulator_threads);
    json_key(out, "threads_not_gathered_errno", 0);
    if (threads->not_gathered != 0)
        json_signed(out, -threads->not_gathered);
    else
        text_out_string(out, "null");
    json_key(out, "threads", 0);
    text_out_char(out, '[');
    json_reporting(out, facts, snapshot, resolved);
    for (int i = 0; i < threads->count; i++)
        json_other(out, &threads->threads[i], threads->timeout_ms, snapshot, resolved);
    text_out_char(out, ']');
}
