/* report_json.c: the crash report for crash reporters, one JSON object.
 * World: signal-safe (text_out, lookups in the published index).
 * Schema: docs/CRASH_REPORT.md. */
#include "report.h"
#include "second_stage.h"
#include "signal_names.h"
#include "../base/json_out.h"
#include "../base/utc_time.h"
#include "../symbolize/frame_json.h"
#include "../symbolize/lookup.h"

#define MODULES_MAX 64

static void json_hint_kinds(struct text_out *out, uintptr_t value, unsigned hints)
{
    json_key(out, "value", 0);
    json_hex(out, value);
    json_key(out, "non_canonical", 0);
    text_out_string(out, hints & CRASH_HINT_NON_CANONICAL ? "true" : "false");
    json_key(out, "free_fill", 0);
    text_out_string(out, hints & (CRASH_HINT_FREE_FILL | CRASH_HINT_NEAR_FREE_FILL) ? "true"
                                                                                   : "false");
    text_out_char(out, '}');
}

/* "fault_hints": where the address of a fault without one may be seen. */
static void json_fault_hints(struct text_out *out, const struct crash_facts *facts)
{
    int count = 0;
    json_key(out, "fault_hints", 0);
    text_out_char(out, '[');
    if (facts->address_unknown && facts->have_operand) {
        text_out_char(out, '{');
        json_key(out, "source", 1);
        json_string(out, "operand");
        json_key(out, "expression", 0);
        text_out_char(out, '"'); /* register names, digits, [+*-]: nothing to escape */
        report_operand_expression(out, &facts->operand);
        text_out_char(out, '"');
        json_hint_kinds(out, facts->operand.address, facts->operand.hints);
        count++;
    }
    for (int i = 0; facts->address_unknown && i < CRASH_REGISTERS; i++) {
        if (facts->register_hints[i] == 0)
            continue;
        text_out_string(out, count++ > 0 ? ",{" : "{");
        json_key(out, "source", 1);
        json_string(out, "register");
        json_key(out, "register", 0);
        json_string(out, crash_register_names[i]);
        json_hint_kinds(out, facts->registers[i], facts->register_hints[i]);
    }
    text_out_char(out, ']');
}

static void json_header(struct text_out *out, const struct crash_facts *facts)
{
    char time[32];
    json_key(out, "format", 1);
    json_string(out, "execinfo_ex crash report 1");
    json_key(out, "kind", 0);
    json_string(out, facts->kind == REPORT_CRASH ? "crash" : "dump");
    json_key(out, "signal", 0);
    if (facts->kind == REPORT_DUMP_CALL)
        text_out_string(out, "null");
    else
        json_signed(out, facts->signo);
    json_key(out, "signal_name", 0);
    json_string(out, facts->kind == REPORT_DUMP_CALL ? NULL : signal_name(facts->signo));
    json_key(out, "code", 0);
    if (facts->have_info)
        json_signed(out, facts->code);
    else
        text_out_string(out, "null");
    json_key(out, "code_name", 0);
    json_string(out, facts->have_info ? signal_code_name(facts->signo, facts->code) : NULL);
    json_key(out, "fault_address", 0);
    if (facts->has_address)
        json_hex(out, facts->fault_address);
    else
        text_out_string(out, "null");
    json_key(out, "fault_address_unknown", 0);
    text_out_string(out, facts->address_unknown ? "true" : "false");
    json_fault_hints(out, facts);
    json_key(out, "access", 0);
    fault_access_json(out, &facts->access);
    json_key(out, "sender", 0);
    if (facts->sent) {
        text_out_string(out, "{\"pid\":");
        json_signed(out, facts->sender_pid);
        text_out_string(out, ",\"uid\":");
        json_signed(out, facts->sender_uid);
        text_out_char(out, '}');
    } else {
        text_out_string(out, "null");
    }
    json_key(out, "pid", 0);
    json_signed(out, facts->pid);
    json_key(out, "tid", 0);
    json_signed(out, facts->tid);
    json_key(out, "thread_name", 0);
    json_string(out, facts->thread_name);
    json_key(out, "program", 0);
    json_string(out, facts->program);
    utc_time_format(facts->time_seconds, facts->time_nanoseconds, time);
    json_key(out, "time", 0);
    json_string(out, time);
    json_key(out, "time_unix", 0);
    json_signed(out, facts->time_seconds);
}

static void json_frames(struct text_out *out, const struct crash_facts *facts,
                        const struct index_snapshot *snapshot,
                        const struct resolved_names *resolved)
{
    json_key(out, "frames", 0);
    frame_json_array_resolved(out, snapshot, resolved, facts->frames, facts->frame_exact,
                              facts->frame_count, 0);
}

static void json_modules(struct text_out *out, const struct crash_facts *facts,
                         const struct thread_set *threads, const struct index_snapshot *snapshot)
{
    static const char digits[] = "0123456789abcdef";
    const struct index_module *modules[MODULES_MAX];
    int count = report_trace_modules(facts, threads, snapshot, modules, MODULES_MAX);
    json_key(out, "modules", 0);
    text_out_char(out, '[');
    for (int i = 0; i < count; i++) {
        text_out_string(out, i == 0 ? "{" : ",{");
        json_key(out, "path", 1);
        json_string(out, modules[i]->path);
        json_key(out, "start", 0);
        json_hex(out, modules[i]->start);
        json_key(out, "end", 0);
        json_hex(out, modules[i]->end);
        json_key(out, "load_bias", 0);
        json_hex(out, modules[i]->bias);
        json_key(out, "build_id", 0);
        if (modules[i]->build_id_length == 0) {
            text_out_string(out, "null");
        } else {
            text_out_char(out, '"');
            for (unsigned b = 0; b < modules[i]->build_id_length; b++) {
                text_out_char(out, digits[modules[i]->build_id[b] >> 4]);
                text_out_char(out, digits[modules[i]->build_id[b] & 15]);
            }
            text_out_char(out, '"');
        }
        text_out_char(out, '}');
        text_out_end_line(out);
    }
    text_out_char(out, ']');
}

static void json_registers(struct text_out *out, const struct crash_facts *facts)
{
    json_key(out, "registers", 0);
    text_out_char(out, '{');
    for (int i = 0; i < CRASH_REGISTERS; i++) {
        json_key(out, crash_register_names[i], i == 0);
        json_hex(out, facts->registers[i]);
    }
    text_out_char(out, '}');
}

void report_json(struct text_out *out, const struct crash_facts *facts,
                 const struct thread_set *threads, const struct index_snapshot *snapshot,
                 const struct report_settings *settings)
{
    const struct resolved_names *resolved = second_stage_names(settings->stage);
    text_out_char(out, '{');
    json_header(out, facts);
    second_stage_json(out, settings->stage);
    text_out_end_line(out);
    int left_out = report_call_lead(out, settings);
    if (left_out) {
        /* As in text: the frames of our own abort are left out. */
        text_out_string(out, ",\"backtrace_left_out\":true,\"frames\":[]");
        if (settings->modules)
            text_out_string(out, ",\"modules\":[]");
        text_out_end_line(out);
    } else {
        json_frames(out, facts, snapshot, resolved);
        if (settings->modules)
            json_modules(out, facts, threads, snapshot);
    }
    if (settings->registers && facts->have_registers)
        json_registers(out, facts);
    if (threads != NULL)
        report_json_threads(out, facts, threads, snapshot, resolved);
}

void report_json_end(struct text_out *out)
{
    text_out_string(out, "}\n");
    text_out_end_line(out);
}
