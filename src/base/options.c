/* options.c: the options parser, one table row per option.
 * World: normal (snprintf for the error message). */
#define _GNU_SOURCE
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SIGNAL_BIT(n) ((uint64_t)1 << (n))

uint64_t options_default_signals(void)
{
    return SIGNAL_BIT(SIGSEGV) | SIGNAL_BIT(SIGBUS) | SIGNAL_BIT(SIGILL) | SIGNAL_BIT(SIGFPE) |
           SIGNAL_BIT(SIGABRT) | SIGNAL_BIT(SIGTRAP) | SIGNAL_BIT(SIGSYS);
}

void options_defaults(struct options *options)
{
    memset(options, 0, sizeof *options);
    options->lines = LINES_OWN;
    options->line_memory = (size_t)64 << 20;
    options->inlines = 1;
    options->index_cache = 1;
    options->demangle = 1;
    options->second_stage = 1;
    options->index_at_load = -1;
    options->second_stage_ms = 0; /* second_stage.c: 2000, ten times that under an emulator */
    options->handler = -1;
    options->signals = options_default_signals();
    options->format = REPORT_TEXT;
    options->frames = 64;
    options->modules = 1;
    options->threads = 1024;
    options->threads_timeout_ms = 1000;
    options->heap = 1;
    options->heap_frames = 16;
    options->free_frames = 8;
    options->guard = 16;
    options->quarantine = (size_t)4 << 20;
    options->alloc_fill = -1;
    options->free_fill = 0xef;
    options->fill_max = (size_t)4 << 10;
    options->on_error = HEAP_ERROR_ABORT;
    options->exit_check = 1;
    options->profile_format = PROFILE_FORMAT_PPROF;
    options->profile_sample = 3; /* inuse_space */
    options->leak_check = 0;
    options->leak_exitcode = -1;
    options->error_exitcode = -1;
    options->guard_pages = 0;
    options->guard_pages_max = (size_t)128 << 20;
    options->guard_pages_budget = 0;
    options->sample_slots = 16;
}

int options_parse_size(const char *text, size_t length, size_t *out)
{
    size_t value = 0, i = 0;

    if (length == 0)
        return -EINVAL;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; i++) {
        if (value > (SIZE_MAX - 9) / 10)
            return -EINVAL;
        value = value * 10 + (size_t)(text[i] - '0');
    }
    if (i == 0)
        return -EINVAL;
    if (i + 1 == length) {
        unsigned shift;
        switch (text[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -EINVAL;
        }
        if (value > (SIZE_MAX >> shift))
            return -EINVAL;
        value <<= shift;
    } else if (i != length) {
        return -EINVAL;
    }
    *out = value;
    return 0;
}

static int equals(const char *text, size_t length, const char *word)
{
    return strlen(word) == length && memcmp(text, word, length) == 0;
}

/* One of WORDS (NULL-terminated), as its index. */
static int parse_word(const char *value, size_t length, const char *const *words, int *out)
{
    for (int i = 0; words[i] != NULL; i++) {
        if (equals(value, length, words[i])) {
            *out = i;
            return 0;
        }
    }
    return -EINVAL;
}

static int parse_lines(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "none", "main", "own", "all", NULL };
    int index;
    if (parse_word(value, length, words, &index) < 0)
        return -EINVAL;
    o->lines = (enum lines_scope)index;
    return 0;
}

static int parse_line_memory(struct options *o, const char *value, size_t length)
{
    return options_parse_size(value, length, &o->line_memory);
}

static int parse_flag(const char *value, size_t length, int *out);

/* 0, 1 (the default directory) or an absolute directory. */
static int parse_index_cache(struct options *o, const char *value, size_t length)
{
    if (parse_flag(value, length, &o->index_cache) == 0) {
        o->index_cache_path[0] = '\0';
        return 0;
    }
    if (length == 0 || length >= sizeof o->index_cache_path || value[0] != '/')
        return -EINVAL;
    memcpy(o->index_cache_path, value, length);
    o->index_cache_path[length] = '\0';
    o->index_cache = 1;
    return 0;
}

static int parse_flag(const char *value, size_t length, int *out)
{
    static const char *const words[] = { "0", "1", NULL };
    return parse_word(value, length, words, out);
}

static int parse_handler(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->handler); }
static int parse_overwrite(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->overwrite); }
static int parse_registers(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->registers); }
static int parse_modules(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->modules); }
static int parse_inlines(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->inlines); }
static int parse_demangle(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->demangle); }

static int parse_index_at_load(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "auto", "0", "1", NULL };
    int index;
    if (parse_word(value, length, words, &index) < 0)
        return -EINVAL;
    o->index_at_load = index - 1;
    return 0;
}

static int parse_second_stage(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "0", "1", "all", NULL };
    return parse_word(value, length, words, &o->second_stage);
}

/* An absolute path: the handler runs it with execve, no PATH search. */
static int parse_symbolizer(struct options *o, const char *value, size_t length)
{
    if (length == 0 || length >= sizeof o->symbolizer || value[0] != '/')
        return -EINVAL;
    memcpy(o->symbolizer, value, length);
    o->symbolizer[length] = '\0';
    return 0;
}

static int parse_format(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "text", "json", NULL };
    int index;
    if (parse_word(value, length, words, &index) < 0)
        return -EINVAL;
    o->format = (enum report_format)index;
    return 0;
}

static int parse_frames(struct options *o, const char *value, size_t length)
{
    size_t frames;
    if (options_parse_size(value, length, &frames) < 0 || frames < 1 || frames > 256)
        return -EINVAL;
    o->frames = (int)frames;
    return 0;
}

static int parse_heap(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->heap); }
static int parse_exit_check(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->exit_check); }
static int parse_leak_check(struct options *o, const char *v, size_t n) { return parse_flag(v, n, &o->leak_check); }

/* A size within [minimum, maximum]. */
static int parse_bounded(const char *value, size_t length, size_t minimum, size_t maximum,
                         size_t *out)
{
    size_t parsed;
    if (options_parse_size(value, length, &parsed) < 0 || parsed < minimum || parsed > maximum)
        return -EINVAL;
    *out = parsed;
    return 0;
}

static int parse_heap_frames(struct options *o, const char *value, size_t length)
{
    size_t frames;
    if (parse_bounded(value, length, 1, 64, &frames) < 0)
        return -EINVAL;
    o->heap_frames = (int)frames;
    return 0;
}

static int parse_free_frames(struct options *o, const char *value, size_t length)
{
    size_t frames;
    if (parse_bounded(value, length, 0, 64, &frames) < 0)
        return -EINVAL;
    o->free_frames = (int)frames;
    return 0;
}

static int parse_mtrace_frames(struct options *o, const char *value, size_t length)
{
    size_t frames;
    if (parse_bounded(value, length, 0, 64, &frames) < 0)
        return -EINVAL;
    o->mtrace_frames = (int)frames;
    return 0;
}

/* An exit status: 0 to 255, in decimal. */
static int parse_status(const char *value, size_t length, int *out)
{
    size_t status;
    if (parse_bounded(value, length, 0, 255, &status) < 0 || value[length - 1] > '9')
        return -EINVAL;
    *out = (int)status;
    return 0;
}

static int parse_leak_exitcode(struct options *o, const char *v, size_t n) { return parse_status(v, n, &o->leak_exitcode); }
static int parse_error_exitcode(struct options *o, const char *v, size_t n) { return parse_status(v, n, &o->error_exitcode); }

static int parse_guard(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, 4096, &o->guard);
}

static int parse_quarantine(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, (size_t)1 << 40, &o->quarantine);
}

static int parse_fill_max(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, SIZE_MAX, &o->fill_max);
}

/* 0, 1 or after (a page after each block), before (a page before it). */
static int parse_guard_pages(struct options *o, const char *v, size_t n)
{
    if (equals(v, n, "0"))
        o->guard_pages = 0;
    else if (equals(v, n, "1") || equals(v, n, "after"))
        o->guard_pages = 1;
    else if (equals(v, n, "before"))
        o->guard_pages = 2;
    else
        return -EINVAL;
    return 0;
}

static int parse_guard_pages_max(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, (size_t)128 << 20, &o->guard_pages_max);
}

static int parse_guard_pages_budget(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, (size_t)1 << 24, &o->guard_pages_budget);
}

static int parse_sample(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 0, (size_t)1 << 30, &o->sample);
}

static int parse_sample_slots(struct options *o, const char *v, size_t n)
{
    return parse_bounded(v, n, 1, (size_t)1 << 16, &o->sample_slots);
}

static int parse_sample_seed(struct options *o, const char *v, size_t n)
{
    size_t seed;
    if (options_parse_size(v, n, &seed) < 0 || v[n - 1] > '9')
        return -EINVAL;
    o->sample_seed = seed;
    return 0;
}

/* off, or a byte: decimal or 0xNN. */
static int parse_fill(const char *value, size_t length, int *out)
{
    size_t byte = 0;
    if (equals(value, length, "off")) {
        *out = -1;
        return 0;
    }
    if (length > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
        for (size_t i = 2; i < length; i++) {
            char c = value[i];
            int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (digit < 0 || byte > 0xff)
                return -EINVAL;
            byte = byte * 16 + (size_t)digit;
        }
    } else if (options_parse_size(value, length, &byte) < 0 || value[length - 1] > '9') {
        return -EINVAL;
    }
    if (byte > 0xff)
        return -EINVAL;
    *out = (int)byte;
    return 0;
}

static int parse_alloc_fill(struct options *o, const char *v, size_t n) { return parse_fill(v, n, &o->alloc_fill); }
static int parse_free_fill(struct options *o, const char *v, size_t n) { return parse_fill(v, n, &o->free_fill); }

static int parse_on_error(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "abort", "report", NULL };
    int index;
    if (parse_word(value, length, words, &index) < 0)
        return -EINVAL;
    o->on_error = (enum heap_error_action)index;
    return 0;
}

static int parse_report(struct options *o, const char *value, size_t length)
{
    if (equals(value, length, "stderr")) {
        o->report[0] = '\0';
        return 0;
    }
    if (length == 0 || length >= sizeof o->report || value[0] != '/')
        return -EINVAL; /* an absolute path, so that a chdir cannot move it */
    memcpy(o->report, value, length);
    o->report[length] = '\0';
    return 0;
}

/* An absolute path, like report=; "" turns it off. */
static int parse_minidump(struct options *o, const char *value, size_t length)
{
    if (length == 0) {
        o->minidump[0] = '\0';
        return 0;
    }
    if (length >= sizeof o->minidump || value[0] != '/')
        return -EINVAL;
    memcpy(o->minidump, value, length);
    o->minidump[length] = '\0';
    return 0;
}

/* An absolute path, like report=; "" turns it off. */
static int parse_profile(struct options *o, const char *value, size_t length)
{
    if (length == 0) {
        o->profile[0] = '\0';
        return 0;
    }
    if (length >= sizeof o->profile || value[0] != '/')
        return -EINVAL;
    memcpy(o->profile, value, length);
    o->profile[length] = '\0';
    return 0;
}

static int parse_profile_format(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "pprof", "folded", NULL };
    int index;
    if (parse_word(value, length, words, &index) < 0)
        return -EINVAL;
    o->profile_format = (enum profile_format)index;
    return 0;
}

/* In the order of src/hooks/profile_facts.h's enum profile_value. */
static int parse_profile_sample(struct options *o, const char *value, size_t length)
{
    static const char *const words[] = { "alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space",   "peak_objects", "peak_space", NULL };
    return parse_word(value, length, words, &o->profile_sample);
}

static int parse_suppressions(struct options *o, const char *value, size_t length)
{
    if (length == 0) {
        o->suppressions[0] = '\0';
        return 0;
    }
    if (length >= sizeof o->suppressions || value[0] != '/')
        return -EINVAL;
    memcpy(o->suppressions, value, length);
    o->suppressions[length] = '\0';
    return 0;
}

/* "RTMIN+N" / "RTMAX-N", as kill -l writes them. */
static int parse_realtime(const char *name)
{
    int base, sign;
    if (strncmp(name, "RTMIN", 5) == 0)
        base = SIGRTMIN, sign = 1;
    else if (strncmp(name, "RTMAX", 5) == 0)
        base = SIGRTMAX, sign = -1;
    else
        return -EINVAL;
    size_t offset = 0;
    if (name[5] != '\0') {
        if (name[5] != (sign > 0 ? '+' : '-') ||
            options_parse_size(name + 6, strlen(name + 6), &offset) < 0 || name[6] > '9')
            return -EINVAL;
    }
    int number = base + sign * (int)offset;
    /* 1..63: the signal sets are 64-bit masks, bit n for signal n. */
    return number >= SIGRTMIN && number <= SIGRTMAX && number < 64 ? number : -EINVAL;
}

int options_parse_signal(const char *text, size_t length)
{
    char name[16];
    if (length == 0 || length >= sizeof name)
        return -EINVAL;
    memcpy(name, text, length);
    name[length] = '\0';
    const char *bare = strncmp(name, "SIG", 3) == 0 ? name + 3 : name;
    for (int n = 1; n < 64; n++) {
        const char *abbreviation = sigabbrev_np(n);
        if (abbreviation != NULL && strcmp(abbreviation, bare) == 0)
            return n;
    }
    int realtime = parse_realtime(bare);
    if (realtime > 0)
        return realtime;
    size_t numeric;
    if (bare == name && options_parse_size(name, length, &numeric) == 0 && name[length - 1] <= '9' &&
        numeric > 0 && numeric < 64)
        return (int)numeric;
    return -EINVAL;
}

/* SEGV,BUS,... (names with or without SIG, or numbers); "default" for
 * the set. */
static int parse_signals(struct options *o, const char *value, size_t length)
{
    uint64_t set = 0;
    while (length > 0) {
        const char *comma = memchr(value, ',', length);
        size_t item = comma ? (size_t)(comma - value) : length;
        if (item == 7 && memcmp(value, "default", 7) == 0) {
            set |= options_default_signals();
        } else {
            int number = options_parse_signal(value, item);
            if (number < 0 || number == SIGKILL || number == SIGSTOP)
                return -EINVAL;
            set |= SIGNAL_BIT(number);
        }
        value += item;
        length -= item;
        if (length > 0) {
            value++;
            length--;
            if (length == 0)
                return -EINVAL; /* a trailing comma */
        }
    }
    if (set == 0)
        return -EINVAL;
    o->signals = set;
    return 0;
}

static int parse_threads(struct options *o, const char *value, size_t length)
{
    size_t threads;
    if (parse_bounded(value, length, 1, 16384, &threads) < 0)
        return -EINVAL;
    o->threads = (int)threads;
    return 0;
}

static int parse_threads_timeout(struct options *o, const char *value, size_t length)
{
    size_t milliseconds;
    if (parse_bounded(value, length, 1, 60000, &milliseconds) < 0)
        return -EINVAL;
    o->threads_timeout_ms = (int)milliseconds;
    return 0;
}

static int parse_second_stage_ms(struct options *o, const char *value, size_t length)
{
    size_t milliseconds;
    if (parse_bounded(value, length, 1, 60000, &milliseconds) < 0)
        return -EINVAL;
    o->second_stage_ms = (int)milliseconds;
    return 0;
}

/* A signal to dump on and run on: not one that cannot be caught, and
 * not 61, on which the threads answer (src/threads/thread_request.h). */
static int parse_dump_signal(struct options *o, const char *value, size_t length)
{
    if (length == 1 && value[0] == '0') {
        o->dump_signal = 0;
        return 0;
    }
    int number = options_parse_signal(value, length);
    if (number < 0 || number == SIGKILL || number == SIGSTOP || number == 61)
        return -EINVAL;
    o->dump_signal = number;
    return 0;
}

static const struct {
    const char *name;
    int (*parse)(struct options *, const char *, size_t);
} known_options[] = {
    { "lines", parse_lines },         { "line_memory", parse_line_memory },
    { "inlines", parse_inlines },     { "index_cache", parse_index_cache },
    { "demangle", parse_demangle },
    { "index_at_load", parse_index_at_load },
    { "second_stage", parse_second_stage }, { "symbolizer", parse_symbolizer },
    { "second_stage_ms", parse_second_stage_ms },
    { "handler", parse_handler },     { "signals", parse_signals },
    { "report", parse_report },       { "overwrite", parse_overwrite },
    { "format", parse_format },       { "frames", parse_frames },
    { "registers", parse_registers }, { "modules", parse_modules },
    { "heap", parse_heap },           { "heap_frames", parse_heap_frames },
    { "free_frames", parse_free_frames },
    { "guard", parse_guard },         { "quarantine", parse_quarantine },
    { "alloc_fill", parse_alloc_fill }, { "free_fill", parse_free_fill },
    { "fill_max", parse_fill_max },   { "on_error", parse_on_error },
    { "mtrace_frames", parse_mtrace_frames }, { "exit_check", parse_exit_check },
    { "threads", parse_threads },     { "threads_timeout_ms", parse_threads_timeout },
    { "dump_signal", parse_dump_signal }, { "minidump", parse_minidump },
    { "profile", parse_profile },     { "profile_format", parse_profile_format },
    { "profile_sample", parse_profile_sample },
    /* the leak check (issue 24) */
    { "leak_check", parse_leak_check }, { "leak_exitcode", parse_leak_exitcode },
    { "error_exitcode", parse_error_exitcode }, { "suppressions", parse_suppressions },
    /* guard pages (issue 25) */
    { "guard_pages", parse_guard_pages }, { "guard_pages_max", parse_guard_pages_max },
    { "guard_pages_budget", parse_guard_pages_budget },
    { "sample", parse_sample },       { "sample_seed", parse_sample_seed },
    { "sample_slots", parse_sample_slots },
};

#define KNOWN_COUNT (sizeof known_options / sizeof known_options[0])

static int parse_one(struct options *options, const char *item, size_t length,
                     char *error, size_t error_size)
{
    const char *equal = memchr(item, '=', length);
    if (equal == NULL) {
        snprintf(error, error_size, "execinfo_ex: option '%.*s' has no '=value'",
                 (int)length, item);
        return -EINVAL;
    }
    size_t name_length = (size_t)(equal - item), value_length = length - name_length - 1;
    const char *value = equal + 1;

    for (size_t i = 0; i < KNOWN_COUNT; i++) {
        if (!equals(item, name_length, known_options[i].name))
            continue;
        if (known_options[i].parse(options, value, value_length) == 0)
            return 0;
        snprintf(error, error_size, "execinfo_ex: bad value '%.*s' for option '%.*s'",
                 (int)value_length, value, (int)name_length, item);
        return -EINVAL;
    }
    int used = snprintf(error, error_size, "execinfo_ex: unknown option '%.*s' (known:",
                        (int)name_length, item);
    for (size_t i = 0; i < KNOWN_COUNT && used >= 0 && (size_t)used < error_size; i++)
        used += snprintf(error + used, error_size - (size_t)used, "%s %s",
                         i == 0 ? "" : ",", known_options[i].name);
    if (used >= 0 && (size_t)used < error_size)
        snprintf(error + used, error_size - (size_t)used, ")");
    return -EINVAL;
}

int options_parse(struct options *options, const char *text, char *error, size_t error_size)
{
    if (error_size > 0)
        error[0] = '\0';
    if (text == NULL)
        return 0;
    while (*text != '\0') {
        const char *end = strchr(text, ':');
        size_t length = end ? (size_t)(end - text) : strlen(text);
        if (length > 0) {
            int result = parse_one(options, text, length, error, error_size);
            if (result < 0)
                return result;
        }
        text += length;
        if (*text == ':')
            text++;
    }
    return 0;
}
