/* report_text.c: the crash report for people.
 * World: signal-safe (text_out, lookups in the published index). */
#include "report.h"
#include "second_stage.h"
#include "execinfo_ex.h"
#include "signal_names.h"
#include "../base/utc_time.h"
#include "../symbolize/frame_format.h"
#include "../symbolize/lookup.h"

#define MODULES_MAX 64

static int add_modules(void *const *frames, int frame_count, const struct index_snapshot *snapshot,
                       const struct index_module **modules, int count, int capacity)
{
    for (int i = 0; i < frame_count; i++) {
        const struct index_module *module = lookup_module(snapshot, (uintptr_t)frames[i]);
        int seen = module == NULL;
        for (int j = 0; j < count && !seen; j++)
            seen = modules[j] == module;
        if (!seen && count < capacity)
            modules[count++] = module;
    }
    return count;
}

int report_trace_modules(const struct crash_facts *facts, const struct thread_set *threads,
                         const struct index_snapshot *snapshot,
                         const struct index_module **modules, int capacity)
{
    int count = add_modules(facts->frames, facts->frame_count, snapshot, modules, 0, capacity);
    for (int t = 0; threads != NULL && t < threads->count; t++)
        count = add_modules(threads->threads[t].frames, threads->threads[t].frame_count, snapshot,
                            modules, count, capacity);
    return count;
}

static void put_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "0x");
    text_out_hex(out, value);
}

static void put_name_or_number(struct text_out *out, const char *name)
{
    text_out_string(out, name != NULL ? name : "unknown");
}

/* The code, and who sent it or where it faulted, as far as it is known. */
static void text_signal_origin(struct text_out *out, const struct crash_facts *facts)
{
    if (!facts->have_info) {
        text_out_string(out, ", code unknown (no siginfo)");
        return;
    }
    text_out_string(out, ", code ");
    if (facts->code < 0) {
        text_out_char(out, '-');
        text_out_decimal(out, (uint64_t)-(int64_t)facts->code);
    } else {
        text_out_decimal(out, (uint64_t)facts->code);
    }
    text_out_string(out, " (");
    put_name_or_number(out, signal_code_name(facts->signo, facts->code));
    text_out_char(out, ')');
    if (facts->sent) {
        text_out_string(out, ", sent by pid ");
        text_out_decimal(out, (uint64_t)facts->sender_pid);
        text_out_string(out, " (uid ");
        text_out_decimal(out, (uint64_t)facts->sender_uid);
        text_out_char(out, ')');
    }
    if (facts->has_address) {
        text_out_string(out, ", fault address ");
        put_hex(out, facts->fault_address);
    } else if (facts->address_unknown) {
        text_out_string(out, ", fault address unknown");
    }
}

/* ", WRITE of size 8" or the like (fault_access_text): what the access did. */
static void text_access(struct text_out *out, const struct fault_access *access)
{
    if (!fault_access_known(access))
        return;
    text_out_string(out, ", ");
    fault_access_text(out, access);
}

static void text_headline(struct text_out *out, const struct crash_facts *facts)
{
    if (facts->kind == REPORT_DUMP_CALL) {
        text_out_string(out, "*** execinfo_ex: thread dump (backtrace_dump_threads)");
        return;
    }
    text_out_string(out, facts->kind == REPORT_DUMP_SIGNAL ? "*** execinfo_ex: thread dump on signal "
                                                           : "*** execinfo_ex: fatal signal ");
    text_out_decimal(out, (uint64_t)facts->signo);
    text_out_string(out, " (");
    put_name_or_number(out, signal_name(facts->signo));
    text_out_char(out, ')');
    text_signal_origin(out, facts);
    text_access(out, &facts->access);
}

static void text_header(struct text_out *out, const struct crash_facts *facts)
{
    char time[32];
    text_headline(out, facts);
    text_out_string(out, "\n*** pid ");
    text_out_decimal(out, (uint64_t)facts->pid);
    text_out_string(out, ", thread ");
    text_out_decimal(out, (uint64_t)facts->tid);
    text_out_string(out, " \"");
    text_out_string(out, facts->thread_name);
    text_out_string(out, "\", program ");
    text_out_string(out, facts->program);
    utc_time_format(facts->time_seconds, facts->time_nanoseconds, time);
    text_out_string(out, "\n*** time ");
    text_out_string(out, time);
    text_out_char(out, '\n');
    text_out_end_line(out);
}

/* "#N  " (two spaces below 10, one from 10: the frames line up). */
static void frame_number(char out[16], int number)
{
    size_t at = 0;
    out[at++] = '#';
    at += format_unsigned(out + at, (uint64_t)number, 10);
    out[at++] = ' ';
    if (number < 10)
        out[at++] = ' ';
    out[at] = '\0';
}

void report_text_frames(struct text_out *out, void *const *frames, const unsigned char *exact,
                        int count, const struct index_snapshot *snapshot,
                        const struct resolved_names *resolved)
{
    struct frame_location location;
    for (int i = 0; i < count; i++) {
        uintptr_t address = (uintptr_t)frames[i];
        resolved_lookup_frame(snapshot, resolved, address,
                              lookup_naming_address(address, exact[i]), &location);
        char number[16];
        frame_number(number, i);
        frame_format_inlined(out, &location, number);
        text_out_string(out, number);
        frame_format(out, address, &location, FRAME_SHAPE_READABLE);
        frame_format_source(out, &location);
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
}

static void text_frames(struct text_out *out, const struct crash_facts *facts,
                        const struct index_snapshot *snapshot,
                        const struct resolved_names *resolved)
{
    static const char *const first[] = {
        [REPORT_CRASH] = " frames, the faulting instruction first):\n",
        [REPORT_DUMP_SIGNAL] = " frames, the interrupted instruction first):\n",
        [REPORT_DUMP_CALL] = " frames, the caller of backtrace_dump_threads first):\n",
    };
    text_out_string(out, "*** backtrace (");
    text_out_decimal(out, (uint64_t)facts->frame_count);
    text_out_string(out, first[facts->kind]);
    report_text_frames(out, facts->frames, facts->frame_exact, facts->frame_count, snapshot,
                       resolved);
}

static void put_build_id(struct text_out *out, const struct index_module *module)
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < module->build_id_length; i++) {
        text_out_char(out, digits[module->build_id[i] >> 4]);
        text_out_char(out, digits[module->build_id[i] & 15]);
    }
}

static void text_modules(struct text_out *out, const struct crash_facts *facts,
                         const struct thread_set *threads, const struct index_snapshot *snapshot)
{
    const struct index_module *modules[MODULES_MAX];
    int count = report_trace_modules(facts, threads, snapshot, modules, MODULES_MAX);
    text_out_string(out, "*** modules of the trace:\n");
    for (int i = 0; i < count; i++) {
        text_out_string(out, "  ");
        put_hex(out, modules[i]->start);
        text_out_char(out, '-');
        put_hex(out, modules[i]->end);
        text_out_string(out, " bias ");
        put_hex(out, modules[i]->bias);
        text_out_char(out, ' ');
        text_out_string(out, modules[i]->path);
        if (modules[i]->build_id_length > 0) {
            text_out_string(out, " build-id ");
            put_build_id(out, modules[i]);
        }
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
}

static void text_registers(struct text_out *out, const struct crash_facts *facts)
{
    text_out_string(out, "*** registers:\n");
    for (int i = 0; i < CRASH_REGISTERS; i++) {
        text_out_string(out, "  ");
        text_out_string(out, crash_register_names[i]);
        text_out_char(out, ' ');
        put_hex(out, facts->registers[i]);
        if (i % 4 == 3 || i == CRASH_REGISTERS - 1) {
            text_out_char(out, '\n');
            text_out_end_line(out);
        }
    }
}

void report_operand_expression(struct text_out *out, const struct crash_operand *operand)
{
    int terms = 0;
    text_out_char(out, '[');
    if (operand->base >= 0) {
        text_out_string(out, crash_register_names[operand->base]);
        terms++;
    }
    if (operand->index >= 0) {
        if (terms++ > 0)
            text_out_char(out, '+');
        text_out_string(out, crash_register_names[operand->index]);
        text_out_char(out, '*');
        text_out_decimal(out, (uint64_t)operand->scale);
    }
    if (operand->displacement != 0 || terms == 0) {
        uint64_t magnitude = operand->displacement < 0 ? -(uint64_t)operand->displacement
                                                       : (uint64_t)operand->displacement;
        if (terms > 0)
            text_out_char(out, operand->displacement < 0 ? '-' : '+');
        put_hex(out, terms > 0 ? magnitude : (uint64_t)operand->displacement);
    }
    text_out_char(out, ']');
}

/* ": not canonical, near the free-fill pattern 0xef" */
static void text_hint_kinds(struct text_out *out, unsigned hints, int free_fill)
{
    const char *separator = ": ";
    if (hints & CRASH_HINT_NON_CANONICAL) {
        text_out_string(out, ": not canonical");
        separator = ", ";
    }
    if (hints & (CRASH_HINT_FREE_FILL | CRASH_HINT_NEAR_FREE_FILL)) {
        text_out_string(out, separator);
        text_out_string(out, hints & CRASH_HINT_FREE_FILL ? "the free-fill pattern 0x"
                                                           : "near the free-fill pattern 0x");
        text_out_hex(out, (uintptr_t)free_fill);
    }
}

/* Where the address of a fault without one may be seen. */
static void text_fault_hints(struct text_out *out, const struct crash_facts *facts)
{
    if (facts->have_operand) {
        text_out_string(out, "*** hint: the faulting instruction's memory operand ");
        report_operand_expression(out, &facts->operand);
        text_out_string(out, " is ");
        put_hex(out, facts->operand.address);
        text_hint_kinds(out, facts->operand.hints, facts->free_fill);
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
    for (int i = 0; i < CRASH_REGISTERS; i++) {
        if (facts->register_hints[i] == 0)
            continue;
        text_out_string(out, "*** hint: ");
        text_out_string(out, crash_register_names[i]);
        text_out_string(out, " holds ");
        put_hex(out, facts->registers[i]);
        text_hint_kinds(out, facts->register_hints[i], facts->free_fill);
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
}

int report_call_lead(struct text_out *out, const struct report_settings *settings)
{
    if (settings->lead == NULL)
        return 0;
    text_out_flush(out);
    return settings->lead(out->fd, settings->lead_context) == BACKTRACE_LEAD_LEAVE_OUT_TRACE;
}

void report_text(struct text_out *out, const struct crash_facts *facts,
                 const struct thread_set *threads, const struct index_snapshot *snapshot,
                 const struct report_settings *settings)
{
    const struct resolved_names *resolved = second_stage_names(settings->stage);
    int left_out = report_call_lead(out, settings);
    text_header(out, facts);
    second_stage_text(out, settings->stage);
    if (facts->address_unknown)
        text_fault_hints(out, facts);
    if (left_out) {
        /* Our own abort after the heap error the lead wrote: its frames
         * are the library's, not the program's. */
        text_out_string(out, "*** backtrace: left out (the heap error above says where)\n");
        text_out_end_line(out);
    } else {
        text_frames(out, facts, snapshot, resolved);
        if (settings->modules)
            text_modules(out, facts, threads, snapshot);
    }
    if (settings->registers && facts->have_registers)
        text_registers(out, facts);
    if (threads != NULL)
        report_text_threads(out, threads, snapshot, resolved);
}

void report_text_end(struct text_out *out)
{
    text_out_string(out, "*** end of report\n");
    text_out_end_line(out);
}
