/* second_stage.c: which frames the symbolizer is asked about, the
 * request, what its answer gives, and the report's line about it.
 * World: signal-safe (text_out into the stage's own buffers; the launch
 * in second_stage_launch.c).
 *
 * The request (one line each, fields separated by tabs):
 *   execinfo_ex_symbolize 1
 *   options <lines: 0 none, 1 main, 2 own, 3 all> <inlines> <demangle>
 *   builder <build-id of the module that holds this library's code>
 *   module <id> <start> <end> <bias> <1: the program> <build-id> <path> [<loader's path>]
 *   address <module id> <address> <naming address>
 *   end
 * numbers in hex but the flags; a module line comes before its first
 * address; the program's path is /proc/PID/exe, which stays the file
 * that was loaded, followed by the loader's path for the program, which
 * the stage reads when /proc/PID/exe is another file (under qemu-user,
 * the emulator). The answer's format is in resolved_names.h. */
#include "second_stage.h"
#include "../base/load_touched.h"
#include "second_stage_launch.h"
#include "../base/json_out.h"
#include "../symbolize/lookup.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

/* Room kept for the last lines ("end"). */
#define REQUEST_RESERVE 16
#define STAGE_DEFAULT_MS 2000

LOAD_TOUCHED int second_stage_emulated; /* second_stage.h; set by install.c */

/* MODULE's data is not there: not read (a cold cache), or unreadable. */
/* Whether the stage is asked about frames of MODULE (with second_stage=0,
 * whether they get .symtab names). */
static int wanted(const struct index_module *module, int mode)
{
    if (module->path == NULL || module->path[0] == '\0' || module->path[0] == '[')
        return 0; /* no file to read: [vdso] is in the index from memory */
    return mode == 2 || lookup_module_unread(module);
}

static void put_field_hex(struct text_out *out, uintptr_t value)
{
    text_out_char(out, '\t');
    text_out_hex(out, value);
}

static void put_build_id(struct text_out *out, const struct index_module *module);

static void put_module(struct text_out *out, const struct index_module *module, size_t id)
{
    text_out_string(out, "module");
    put_field_hex(out, id);
    put_field_hex(out, module->start);
    put_field_hex(out, module->end);
    put_field_hex(out, module->bias);
    text_out_string(out, module->is_main ? "\t1\t" : "\t0\t");
    put_build_id(out, module);
    text_out_char(out, '\t');
    if (module->is_main) {
        text_out_string(out, "/proc/");
        text_out_decimal(out, (uint64_t)getpid());
        text_out_string(out, "/exe\t");
        text_out_string(out, module->path); /* if that is another file (qemu-user) */
    } else {
        text_out_string(out, module->path);
    }
    text_out_char(out, '\n');
}

static int already_asked(const struct second_stage_request *state, uintptr_t naming)
{
    for (int i = 0; i < state->count; i++)
        if (state->asked[i] == naming)
            return 1;
    return 0;
}

static int module_was_sent(struct second_stage_request *state, size_t id)
{
    if (id >= sizeof state->module_sent * 8)
        return 0;
    int sent = state->module_sent[id / 8] >> (id % 8) & 1;
    state->module_sent[id / 8] |= (unsigned char)(1u << (id % 8));
    return sent;
}

static void ask(struct second_stage_request *state, uintptr_t address, int exact)
{
    uintptr_t naming = lookup_naming_address(address, exact);
    const struct index_module *module = lookup_module(state->snapshot, address);
    if (state->full || module == NULL || !wanted(module, state->mode) ||
        already_asked(state, naming))
        return;
    if (state->count == RESOLVED_FRAMES_MAX) {
        state->full = 1;
        return;
    }
    struct text_out *out = &state->out;
    size_t before = out->length;
    size_t id = (size_t)(module - state->snapshot->modules);
    if (!module_was_sent(state, id))
        put_module(out, module, id);
    text_out_string(out, "address");
    put_field_hex(out, id);
    put_field_hex(out, address);
    put_field_hex(out, naming);
    text_out_char(out, '\n');
    if (out->total + REQUEST_RESERVE > out->capacity) {
        out->length = out->total = before; /* this one does not fit: the rest neither */
        state->full = 1;
        return;
    }
    state->asked_module[state->count] = id;
    state->asked[state->count++] = naming;
}

static void ask_frames(struct second_stage_request *state, void *const *frames,
                       const unsigned char *exact, int count)
{
    for (int i = 0; i < count; i++)
        ask(state, (uintptr_t)frames[i], exact[i]);
}

static void put_build_id(struct text_out *out, const struct index_module *module)
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; module != NULL && i < module->build_id_length; i++) {
        text_out_char(out, digits[module->build_id[i] >> 4]);
        text_out_char(out, digits[module->build_id[i] & 15]);
    }
}

/* The header; "builder": the index cache's files the stage may store
 * are keyed by this library's build-id, as the index's own. */
static void start_request(struct second_stage *stage, const struct options *options)
{
    struct text_out *out = &stage->ask.out;
    text_out_init_buffer(out, stage->request, sizeof stage->request);
    text_out_string(out, "execinfo_ex_symbolize 1\noptions\t");
    text_out_decimal(out, (uint64_t)options->lines);
    text_out_string(out, options->inlines ? "\t1" : "\t0");
    text_out_string(out, options->demangle ? "\t1\n" : "\t0\n");
    text_out_string(out, "builder\t");
    put_build_id(out, lookup_module(stage->ask.snapshot, (uintptr_t)&start_request));
    text_out_char(out, '\n');
}

/* The request's "end", then the exchange. */
static void exchange(struct second_stage *stage, struct second_stage_request *state)
{
    text_out_string(&state->out, "end\n");
    stage->request_length = state->out.length;
    struct stage_exchange exchange = {
        .program = stage->program, .request = stage->request,
        .request_length = stage->request_length, .answer = stage->names.answer,
        .answer_capacity = sizeof stage->names.answer, .timeout_ms = stage->timeout_ms,
        .leave = &stage->child,
    };
    stage->outcome = stage_exchange_run(&exchange);
    stage->error = exchange.error;
    stage->wait_status = exchange.wait_status;
    stage->names.answer_length = exchange.answer_length;
    if (stage->outcome != SECOND_STAGE_ANSWERED)
        return;
    if (resolved_names_parse(&stage->names) == 0)
        return;
    stage_exchange_reap(&stage->child, &stage->wait_status); /* how it ended tells why */
    int exited_well = stage->wait_status != -1 && WIFEXITED(stage->wait_status) &&
                      WEXITSTATUS(stage->wait_status) == 0;
    stage->outcome = exited_well || stage->wait_status == -1 ? SECOND_STAGE_MALFORMED
                                                              : SECOND_STAGE_DIED;
}

/* Whether the stage's answer names NAMING. */
static int named_by_stage(const struct second_stage *stage, uintptr_t naming)
{
    const struct resolved_names *names = second_stage_names(stage);
    for (int i = 0; names != NULL && names != &stage->cold_names && i < names->count; i++)
        if (names->frames[i].naming_address == naming)
            return names->frames[i].function != NULL;
    return 0;
}

/* The asked frames of cold modules that the stage did not name: named
 * from their files, one pass over each module's symbols. */
static void name_cold_frames(struct second_stage *stage, struct second_stage_request *state)
{
    uintptr_t *naming = state->naming;
    unsigned char *done = state->done;
    memset(done, 0, sizeof state->done);
    for (int first = 0; first < stage->asked; first++) {
        size_t id = state->asked_module[first];
        const struct index_module *module = &state->snapshot->modules[id];
        if (done[first] || !lookup_module_unread(module))
            continue;
        int count = 0;
        for (int i = first; i < stage->asked; i++) {
            if (state->asked_module[i] != id)
                continue;
            done[i] = 1;
            if (!named_by_stage(stage, state->asked[i]))
                naming[count++] = state->asked[i];
        }
        if (count > 0)
            symtab_names_add(&stage->cold_names, module, naming, count, &stage->scratch);
    }
}

void second_stage_run(struct second_stage *stage, const struct crash_facts *facts,
                      const struct thread_set *threads, const struct index_snapshot *snapshot,
                      const struct options *options)
{
    struct second_stage_request *state = &stage->ask;
    memset(state, 0, sizeof *state);
    stage->outcome = SECOND_STAGE_NOT_NEEDED;
    stage->asked = 0;
    stage->names.count = 0;
    stage->names.inlined_count = 0;
    stage->names.under = &stage->cold_names;
    stage->cold_names.count = 0;
    stage->cold_names.inlined_count = 0;
    stage->cold_names.answer_length = 0;
    stage->cold_names.under = NULL;
    stage->program = options->symbolizer;
    stage->timeout_ms = options->second_stage_ms != 0 ? options->second_stage_ms
                        : second_stage_emulated            ? 10 * STAGE_DEFAULT_MS
                                                           : STAGE_DEFAULT_MS;
    if (snapshot == NULL)
        return;
    state->snapshot = snapshot;
    state->mode = options->second_stage;
    start_request(stage, options);
    ask_frames(state, facts->frames, facts->frame_exact, facts->frame_count);
    for (int t = 0; threads != NULL && t < threads->count; t++)
        ask_frames(state, threads->threads[t].frames, threads->threads[t].frame_exact,
                   threads->threads[t].frame_count);
    stage->asked = state->count;
    if (stage->asked == 0)
        return;
    if (options->second_stage == 0)
        stage->outcome = SECOND_STAGE_OFF;
    else if (stage->program[0] == '\0')
        stage->outcome = SECOND_STAGE_NO_PROGRAM;
    else
        exchange(stage, state);
    name_cold_frames(stage, state);
}

void second_stage_finish(struct second_stage *stage)
{
    int wait_status = -1;
    if (stage != NULL)
        stage_exchange_reap(&stage->child, &wait_status);
}

const struct resolved_names *second_stage_names(const struct second_stage *stage)
{
    if (stage == NULL)
        return NULL;
    if (stage->outcome == SECOND_STAGE_ANSWERED || stage->outcome == SECOND_STAGE_MALFORMED)
        return &stage->names; /* a malformed answer keeps the frames before the fault */
    return stage->cold_names.count > 0 ? &stage->cold_names : NULL;
}

static const char *errno_name(int error)
{
    switch (error) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ENOMEM: return "ENOMEM";
    case EAGAIN: return "EAGAIN";
    case ENOEXEC: return "ENOEXEC";
    case E2BIG: return "E2BIG";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENOSYS: return "ENOSYS";
    case ETXTBSY: return "ETXTBSY";
    case ELIBBAD: return "ELIBBAD";
    default: return NULL;
    }
}

static void put_errno(struct text_out *out, int error)
{
    text_out_string(out, "errno ");
    text_out_decimal(out, (uint64_t)error);
    const char *name = errno_name(error);
    if (name != NULL) {
        text_out_string(out, " (");
        text_out_string(out, name);
        text_out_char(out, ')');
    }
}

static void put_death(struct text_out *out, const struct second_stage *stage)
{
    int status = stage->wait_status;
    text_out_string(out, stage->program);
    if (WIFSIGNALED(status)) {
        text_out_string(out, " was killed by signal ");
        text_out_decimal(out, (uint64_t)WTERMSIG(status));
    } else {
        text_out_string(out, " exited with status ");
        text_out_decimal(out, (uint64_t)WEXITSTATUS(status));
    }
    text_out_string(out, " before a whole answer");
}

/* Why the stage gave nothing, or what it gave, without a line end. */
static void put_reason(struct text_out *out, const struct second_stage *stage)
{
    switch (stage->outcome) {
    case SECOND_STAGE_NOT_NEEDED:
        break;
    case SECOND_STAGE_ANSWERED:
        text_out_string(out, stage->program);
        break;
    case SECOND_STAGE_OFF:
        text_out_string(out, "off (second_stage=0)");
        break;
    case SECOND_STAGE_NO_PROGRAM:
        text_out_string(out, "no symbolizer (none found at install; symbolizer=PATH)");
        break;
    case SECOND_STAGE_PIPE_FAILED:
        text_out_string(out, "pipe2 failed: ");
        put_errno(out, stage->error);
        break;
    case SECOND_STAGE_START_FAILED:
        text_out_string(out, "clone failed: ");
        put_errno(out, stage->error);
        break;
    case SECOND_STAGE_EXEC_FAILED:
        text_out_string(out, "execve ");
        text_out_string(out, stage->program);
        text_out_string(out, " failed: ");
        put_errno(out, stage->error);
        break;
    case SECOND_STAGE_TIMED_OUT:
        text_out_string(out, stage->program);
        text_out_string(out, " gave no whole answer in ");
        text_out_decimal(out, (uint64_t)stage->timeout_ms);
        text_out_string(out, " ms (killed)");
        break;
    case SECOND_STAGE_DIED:
        put_death(out, stage);
        break;
    case SECOND_STAGE_MALFORMED:
        text_out_string(out, stage->program);
        text_out_string(out, " gave a malformed answer");
        break;
    }
}

static int resolved_count(const struct second_stage *stage)
{
    const struct resolved_names *names = second_stage_names(stage);
    return names != NULL && names != &stage->cold_names ? names->count : 0;
}

void second_stage_text(struct text_out *out, const struct second_stage *stage)
{
    if (stage == NULL || stage->outcome == SECOND_STAGE_NOT_NEEDED)
        return;
    text_out_string(out, "*** second stage: ");
    if (stage->outcome == SECOND_STAGE_ANSWERED) {
        text_out_decimal(out, (uint64_t)resolved_count(stage));
        text_out_string(out, " of ");
        text_out_decimal(out, (uint64_t)stage->asked);
        text_out_string(out, " addresses resolved by ");
        put_reason(out, stage);
    } else {
        text_out_string(out, "not used: ");
        put_reason(out, stage);
        text_out_string(out, "; its frames are as the index names them, else by their files' "
                             "symbol tables, else path(+offset)");
    }
    text_out_char(out, '\n');
    text_out_end_line(out);
}

void second_stage_json(struct text_out *out, const struct second_stage *stage)
{
    static const char *const outcomes[] = {
        [SECOND_STAGE_NOT_NEEDED] = "not_needed", [SECOND_STAGE_OFF] = "off",
        [SECOND_STAGE_ANSWERED] = "answered",
        [SECOND_STAGE_NO_PROGRAM] = "no_program", [SECOND_STAGE_PIPE_FAILED] = "pipe_failed",
        [SECOND_STAGE_START_FAILED] = "start_failed", [SECOND_STAGE_EXEC_FAILED] = "exec_failed",
        [SECOND_STAGE_TIMED_OUT] = "timed_out", [SECOND_STAGE_DIED] = "died",
        [SECOND_STAGE_MALFORMED] = "malformed",
    };
    if (stage == NULL || stage->outcome == SECOND_STAGE_NOT_NEEDED)
        return;
    char reason[512];
    struct text_out text;
    text_out_init_buffer(&text, reason, sizeof reason - 1);
    put_reason(&text, stage);
    reason[text.length] = '\0';
    json_key(out, "second_stage", 0);
    text_out_char(out, '{');
    json_key(out, "outcome", 1);
    json_string(out, outcomes[stage->outcome]);
    json_key(out, "reason", 0);
    if (stage->outcome == SECOND_STAGE_ANSWERED)
        text_out_string(out, "null");
    else
        json_string(out, reason);
    json_key(out, "asked", 0);
    json_signed(out, stage->asked);
    json_key(out, "resolved", 0);
    json_signed(out, resolved_count(stage));
    text_out_char(out, '}');
}
