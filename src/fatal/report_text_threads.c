/* report_text_threads.c: the other threads in the text report, one
 * section each, by tid, after the crashing (or dumping) thread's part.
 * World: signal-safe (text_out, lookups in the published index). */
#include "report.h"
#include "signal_names.h"

#include <errno.h>

static void put_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "0x");
    text_out_hex(out, value);
}

/* ": did not answer within 1000 ms", ": blocks every signal", ... */
static void thread_reason(struct text_out *out, const struct thread_facts *thread,
                          int timeout_ms)
{
    switch (thread->outcome) {
    case THREAD_READ:
        if (thread->crashed_signo != 0) {
            text_out_string(out, ": also crashed: signal ");
            text_out_decimal(out, (uint64_t)thread->crashed_signo);
            const char *name = signal_name(thread->crashed_signo);
            text_out_string(out, " (");
            text_out_string(out, name != NULL ? name : "unknown");
            text_out_char(out, ')');
        }
        return;
    case THREAD_BLOCKS_SIGNALS:
        text_out_string(out, thread->blocks_all ? ": blocks every signal"
                                                : ": blocks the signal we ask with (61)");
        return;
    case THREAD_NO_ANSWER:
        text_out_string(out, ": did not answer within ");
        text_out_decimal(out, (uint64_t)timeout_ms);
        text_out_string(out, " ms");
        return;
    case THREAD_EXITED:
    case THREAD_NOT_STOPPED:
        text_out_string(out, ": ");
        text_out_string(out, thread_outcome_words(thread->outcome));
        return;
    }
}

static void thread_header(struct text_out *out, const struct thread_facts *thread, int timeout_ms)
{
    text_out_string(out, "*** thread ");
    text_out_decimal(out, (uint64_t)thread->tid);
    text_out_string(out, " \"");
    text_out_string(out, thread->name);
    text_out_string(out, "\" ");
    text_out_char(out, thread->state);
    text_out_string(out, " (");
    text_out_string(out, thread_state_name(thread->state));
    text_out_char(out, ')');
    thread_reason(out, thread, timeout_ms);
    if (thread->outcome != THREAD_READ && thread->have_syscall) {
        if (thread->syscall >= 0) {
            text_out_string(out, "; in syscall ");
            text_out_decimal(out, (uint64_t)thread->syscall);
        } else {
            text_out_string(out, "; in user space");
        }
        text_out_string(out, " at pc ");
        put_hex(out, thread->syscall_pc);
        text_out_string(out, ", sp ");
        put_hex(out, thread->syscall_sp);
    }
    if (thread->frame_count > 0) {
        text_out_string(out, thread->outcome == THREAD_READ ? ", " : "; walked from them, ");
        text_out_decimal(out, (uint64_t)thread->frame_count);
        text_out_string(out, thread->frame_count == 1 ? " frame:" : " frames:");
    }
    text_out_char(out, '\n');
    text_out_end_line(out);
}

static void not_gathered(struct text_out *out, int error)
{
    text_out_string(out, "*** other threads not gathered: ");
    if (error == -EBUSY) {
        text_out_string(out, "another gathering was under way");
    } else {
        text_out_string(out, "errno ");
        text_out_decimal(out, (uint64_t)(error < 0 ? -error : error));
    }
    text_out_char(out, '\n');
    text_out_end_line(out);
}

void report_text_threads(struct text_out *out, const struct thread_set *threads,
                         const struct index_snapshot *snapshot,
                         const struct resolved_names *resolved)
{
    if (threads->not_gathered != 0) {
        not_gathered(out, threads->not_gathered);
        return;
    }
    if (threads->count > 0) {
        text_out_string(out, "*** other threads (");
        text_out_decimal(out, (uint64_t)threads->count);
        text_out_string(out, "), by tid:\n");
        text_out_end_line(out);
    }
    for (int i = 0; i < threads->count; i++) {
        const struct thread_facts *thread = &threads->threads[i];
        thread_header(out, thread, threads->timeout_ms);
        report_text_frames(out, thread->frames, thread->frame_exact, thread->frame_count,
                           snapshot, resolved);
    }
    if (threads->left_out > 0) {
        text_out_string(out, "*** ");
        text_out_decimal(out, (uint64_t)threads->left_out);
        text_out_string(out, threads->left_out == 1 ? " more thread left out (threads="
                                                    : " more threads left out (threads=");
        text_out_decimal(out, (uint64_t)threads->cap);
        text_out_string(out, ")\n");
        text_out_end_line(out);
    }
    if (threads->emulator_threads > 0) {
        text_out_string(out, "*** ");
        text_out_decimal(out, (uint64_t)threads->emulator_threads);
        text_out_string(out, threads->emulator_threads == 1
                                 ? " thread of qemu-user left out (its own, not the program's)\n"
                                 : " threads of qemu-user left out (its own, not the program's)\n");
        text_out_end_line(out);
    }
}
