/* Inlined frames (issue 15): a program built -O2 crashes two inlined
 * calls deep (tests/fixtures/inline_program.c, and its C++ twin); the
 * chain the crash report, print_trace and backtrace_print_fd write, and
 * backtrace_resolve gives, must equal `addr2line -i -f -C` on the same
 * address, frame for frame, run here at test time. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define CHAIN_MAX 16

struct chain_frame {
    char function[512];
    char file[512];
    unsigned line;
};

struct chain {
    struct chain_frame frames[CHAIN_MAX];
    int count;
    unsigned long address; /* of the real frame, as written */
};

static void fixture_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", getenv("EXECINFO_EX_TESTS"), name);
}

static void set_options(void *options)
{
    setenv("EXECINFO_EX_OPTIONS", options, 1);
}

/* The fixture NAME with ARGUMENT and OPTION (NULL: none), under
 * EXECINFO_EX_OPTIONS=OPTIONS. */
static void run_fixture(const char *name, const char *argument, const char *option,
                        const char *options, struct child_result *result)
{
    char program[4096];
    fixture_path(program, sizeof program, name);
    char *argv[] = { program, (char *)argument, (char *)option, NULL };
    run_program(program, argv, set_options, (void *)options, result);
}

/* "file:line" at the end of TEXT (up to END) into FRAME. */
static void parse_place(const char *text, size_t length, struct chain_frame *frame)
{
    const char *colon = memrchr(text, ':', length);
    cr_assert_not_null(colon, "%.*s", (int)length, text);
    snprintf(frame->file, sizeof frame->file, "%.*s", (int)(colon - text), text);
    frame->line = (unsigned)strtoul(colon + 1, NULL, 10);
}

/* The length of an inlined call's line's prefix at TEXT: four spaces
 * (print_trace), or the frame's own "#N  " (the crash report, whose
 * frames are numbered: every inlined line carries its frame's number),
 * then "inlined: "; 0 if TEXT is no such line. */
static size_t inlined_prefix(const char *text, const char **number)
{
    *number = NULL;
    if (strncmp(text, "    inlined: ", 13) == 0)
        return 13;
    if (text[0] != '#')
        return 0;
    size_t at = 1 + strspn(text + 1, "0123456789");
    at += strspn(text + at, " ");
    if (strncmp(text + at, "inlined: ", 9) != 0)
        return 0;
    *number = text;
    return at + 9;
}

/* The inlined-call lines at TEXT, then the frame line they belong to
 * ("[#N  ]path(NAME+0x..) [0xADDRESS] at FILE:LINE"), which in a
 * numbered trace has the inlined lines' number. Returns the text after
 * that frame line. */
static const char *parse_text_chain(const char *text, struct chain *chain)
{
    const char *number = NULL;
    memset(chain, 0, sizeof *chain);
    for (;;) {
        const char *end = strchr(text, '\n');
        cr_assert_not_null(end, "no frame line in:\n%s", text);
        cr_assert_lt(chain->count, CHAIN_MAX);
        struct chain_frame *frame = &chain->frames[chain->count++];
        const char *at = memmem(text, (size_t)(end - text), " at ", 4);
        for (const char *next; at != NULL &&
             (next = memmem(at + 1, (size_t)(end - at - 1), " at ", 4)) != NULL;)
            at = next;
        const char *line_number;
        size_t prefix = inlined_prefix(text, &line_number);
        if (prefix > 0) {
            if (line_number != NULL) {
                size_t digits = strspn(line_number + 1, "0123456789");
                cr_assert(number == NULL || strncmp(number, line_number, digits + 1) == 0,
                          "the inlined lines of one frame have two numbers: %.*s",
                          (int)(end - text), text);
                number = line_number;
            }
            const char *name = text + prefix, *name_end = at != NULL ? at : end;
            snprintf(frame->function, sizeof frame->function, "%.*s", (int)(name_end - name),
                     name);
            if (at != NULL)
                parse_place(at + 4, (size_t)(end - at - 4), frame);
            text = end + 1;
            continue;
        }
        /* A demangled name holds '(' and perhaps '+': the offset's '+' is
         * the last before " [0x". */
        const char *open = strchr(text, '('), *bracket = strstr(text, " [0x");
        const char *plus = open != NULL && bracket != NULL && open < bracket
                               ? memrchr(open, '+', (size_t)(bracket - open))
                               : NULL;
        cr_assert(open != NULL && plus != NULL && bracket != NULL && open < end && bracket < end,
                  "not a frame line: %.*s", (int)(end - text), text);
        if (number != NULL)
            cr_assert(strncmp(text, number, strspn(number + 1, "0123456789") + 2) == 0,
                      "the frame line has another number than its inlined lines: %.*s",
                      (int)(end - text), text);
        snprintf(frame->function, sizeof frame->function, "%.*s", (int)(plus - open - 1),
                 open + 1);
        chain->address = strtoul(bracket + 4, NULL, 16);
        if (at != NULL)
            parse_place(at + 4, (size_t)(end - at - 4), frame);
        return end + 1;
    }
}

/* What addr2line -i -f -C says of ADDRESS (link-time) in PROGRAM. */
static void addr2line_chain(const char *program, unsigned long address, struct chain *chain)
{
    char command[4200], function[512], place[1024];
    snprintf(command, sizeof command, "addr2line -i -f -C -e '%s' 0x%lx", program, address);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    memset(chain, 0, sizeof *chain);
    while (chain->count < CHAIN_MAX && fgets(function, sizeof function, pipe) != NULL &&
           fgets(place, sizeof place, pipe) != NULL) {
        struct chain_frame *frame = &chain->frames[chain->count++];
        function[strcspn(function, "\n")] = '\0';
        place[strcspn(place, " \n")] = '\0'; /* " (discriminator N)" */
        snprintf(frame->function, sizeof frame->function, "%s", function);
        parse_place(place, strlen(place), frame);
    }
    cr_assert_eq(pclose(pipe), 0, "%s", command);
}

/* Run OURS' function names through c++filt (with demangle=0 C++ names
 * are written as the DWARF and the symbol table give them, mangled;
 * c++filt leaves a name that is not mangled as it is). */
static void demangle_names(struct chain *ours)
{
    for (int i = 0; i < ours->count; i++) {
        char command[700];
        snprintf(command, sizeof command, "c++filt '%s'", ours->frames[i].function);
        FILE *pipe = popen(command, "r");
        cr_assert_not_null(pipe);
        cr_assert_not_null(fgets(ours->frames[i].function, sizeof ours->frames[i].function, pipe));
        ours->frames[i].function[strcspn(ours->frames[i].function, "\n")] = '\0';
        pclose(pipe);
    }
}

/* Frame for frame: the names, the lines, and the files (ours may be the
 * DWARF's relative name, addr2line joins the compilation directory). */
static void assert_same_chain(const struct chain *ours, const struct chain *expected,
                              const char *context)
{
    cr_assert_eq(ours->count, expected->count, "%s: %d frames, addr2line %d", context,
                 ours->count, expected->count);
    for (int i = 0; i < ours->count; i++) {
        const struct chain_frame *a = &ours->frames[i], *b = &expected->frames[i];
        size_t length = strlen(a->file), whole = strlen(b->file);
        cr_assert_str_eq(a->function, b->function, "%s: frame %d", context, i);
        cr_assert_eq(a->line, b->line, "%s: frame %d (%s)", context, i, a->function);
        cr_assert(length > 0 && length <= whole && strcmp(b->file + whole - length, a->file) == 0 &&
                  (length == whole || b->file[whole - length - 1] == '/'),
                  "%s: frame %d: %s, addr2line %s", context, i, a->file, b->file);
    }
}

/* The bias of the module whose path ends with NAME, from a report's
 * modules section ("  0xSTART-0xEND bias 0xBIAS PATH build-id ..."). */
static unsigned long report_bias(const char *report, const char *name)
{
    for (const char *line = strstr(report, "*** modules of the trace:\n"); line != NULL;
         line = strchr(line + 1, '\n')) {
        const char *bias = strstr(line, " bias 0x"), *end = strchr(line + 1, '\n');
        if (bias == NULL || end == NULL || bias > end)
            continue;
        const char *path = strchr(bias + 8, ' ') + 1, *path_end = strchr(path, ' ');
        size_t length = strlen(name);
        if (path_end != NULL && path_end - path >= (long)length &&
            memcmp(path_end - length, name, length) == 0)
            return strtoul(bias + 8, NULL, 16);
    }
    cr_assert_fail("no module %s in:\n%s", name, report);
    return 0;
}

/* The crash report's frame #0 against addr2line on the faulting pc. */
static void check_crash_chain(const char *name, const char *options, int demangle,
                              struct chain *ours)
{
    static struct child_result result;
    char program[4096];
    struct chain expected;
    fixture_path(program, sizeof program, name);
    run_fixture(name, "crash", NULL, options, &result);
    assert_died_by(&result, SIGSEGV);
    const char *trace = strstr(result.output, "the faulting instruction first):\n");
    cr_assert_not_null(trace, "%s", result.output);
    const char *after = parse_text_chain(strchr(trace, '\n') + 1, ours);
    cr_assert(strncmp(after, "#1  ", 4) == 0, "%s", result.output);
    if (demangle)
        demangle_names(ours);
    addr2line_chain(program, ours->address - report_bias(result.output, name), &expected);
    assert_same_chain(ours, &expected, result.output);
}

Test(inline, crash_report_chain_equals_addr2line, .timeout = 30)
{
    struct chain ours;
    check_crash_chain("inline_program", "index_cache=0", 0, &ours);
    /* The chain is the one the fixture was written to have. */
    cr_assert_eq(ours.count, 3);
    cr_assert_str_eq(ours.frames[0].function, "deref");
    cr_assert_str_eq(ours.frames[1].function, "helper");
    cr_assert_str_eq(ours.frames[2].function, "compute");
}

Test(inline, cxx_crash_report_chain_equals_addr2line, .timeout = 30)
{
    struct chain ours;
    check_crash_chain("inline_program_cxx", "index_cache=0", 0, &ours);
    cr_assert_eq(ours.count, 3);
    cr_assert(strstr(ours.frames[0].function, "app::Parser::deref") != NULL, "%s",
              ours.frames[0].function);
}

/* demangle=0: every name of the chain as the DWARF and the symbol table
 * have it, which c++filt turns into addr2line -C's. */
Test(inline, cxx_chain_stays_mangled_with_demangle_off, .timeout = 30)
{
    static struct child_result result;
    struct chain mangled;
    run_fixture("inline_program_cxx", "crash", NULL, "index_cache=0:demangle=0", &result);
    assert_died_by(&result, SIGSEGV);
    const char *trace = strstr(result.output, "the faulting instruction first):\n");
    cr_assert_not_null(trace, "%s", result.output);
    parse_text_chain(strchr(trace, '\n') + 1, &mangled);
    cr_assert_eq(mangled.count, 3, "%s", result.output);
    for (int i = 0; i < mangled.count; i++)
        cr_assert(strncmp(mangled.frames[i].function, "_Z", 2) == 0, "frame %d: %s", i,
                  mangled.frames[i].function);
    struct chain ours;
    check_crash_chain("inline_program_cxx", "index_cache=0:demangle=0", 1, &ours);
}

/* The cache files (*.idx) in DIRECTORY. */
static int count_cache_files(const char *directory)
{
    DIR *listing = opendir(directory);
    struct dirent *entry;
    int count = 0;
    cr_assert_not_null(listing, "%s", directory);
    while ((entry = readdir(listing)) != NULL) {
        size_t length = strlen(entry->d_name);
        count += length > 4 && strcmp(entry->d_name + length - 4, ".idx") == 0;
    }
    closedir(listing);
    return count;
}

/* The cache file written by the first run gives the second the same chain;
 * inlines=0 has a key of its own and gets no chain from it. */
Test(inline, cached_index_gives_the_same_chain, .timeout = 60)
{
    char directory[] = "/tmp/execinfo_ex_inline_XXXXXX", options[128];
    struct chain first, second;
    static struct child_result result;
    cr_assert_not_null(mkdtemp(directory));
    snprintf(options, sizeof options, "index_cache=%s", directory);
    check_crash_chain("inline_program", options, 0, &first);
    /* The first run stored the program's index: the second reads it. */
    int stored = count_cache_files(directory);
    cr_assert_gt(stored, 0, "no cache file in %s", directory);
    check_crash_chain("inline_program", options, 0, &second);
    cr_assert_eq(count_cache_files(directory), stored, "the second run built and stored again");
    cr_assert_eq(second.count, 3);
    snprintf(options, sizeof options, "index_cache=%s:inlines=0", directory);
    run_fixture("inline_program", "crash", NULL, options, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(strstr(result.output, "inlined"), NULL, "%s", result.output);
    cr_assert_gt(count_cache_files(directory), stored, "inlines=0 stored no file of its own");
    char command[200];
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    cr_assert_eq(system(command), 0);
}

/* inlines=0: today's report, the innermost line on the real frame. */
Test(inline, inlines_off_writes_the_frame_alone, .timeout = 30)
{
    static struct child_result result;
    struct chain ours, expected;
    char program[4096];
    fixture_path(program, sizeof program, "inline_program");
    run_fixture("inline_program", "crash", NULL, "index_cache=0:inlines=0", &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(strstr(result.output, "inlined"), NULL, "%s", result.output);
    const char *trace = strstr(result.output, "the faulting instruction first):\n");
    cr_assert_not_null(trace);
    parse_text_chain(strchr(trace, '\n') + 1, &ours);
    cr_assert_eq(ours.count, 1, "%s", result.output);
    addr2line_chain(program, ours.address - report_bias(result.output, "inline_program"),
                    &expected);
    cr_assert_eq(expected.count, 3);
    cr_assert_str_eq(ours.frames[0].function, "compute");
    cr_assert_eq(ours.frames[0].line, expected.frames[0].line, "%s", result.output);

    run_fixture("inline_program", "crash", "format=json", "index_cache=0:inlines=0", &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "\"frames\":[") != NULL, "%s", result.output);
    cr_assert_eq(strstr(result.output, "\"inlined\""), NULL, "%s", result.output);
}

/* JSON: the same chain, as the first frame's "inlined" member. */
Test(inline, json_frame_holds_the_inlined_calls, .timeout = 30)
{
    static struct child_result text, json;
    struct chain ours;
    run_fixture("inline_program", "crash", NULL, "index_cache=0", &text);
    run_fixture("inline_program", "crash", "format=json", "index_cache=0", &json);
    assert_died_by(&json, SIGSEGV);
    const char *trace = strstr(text.output, "the faulting instruction first):\n");
    cr_assert_not_null(trace, "%s", text.output);
    parse_text_chain(strchr(trace, '\n') + 1, &ours);
    cr_assert_eq(ours.count, 3);
    /* {"address":...,"function":"compute",...,"file":F,"line":L,"inlined":[{...},{...}]} */
    const char *frame = strstr(json.output, "\"frames\":[{");
    cr_assert_not_null(frame, "%s", json.output);
    const char *frame_end = strstr(frame, "]}");
    const char *inlined = strstr(frame, "\"inlined\":[");
    cr_assert(inlined != NULL && inlined < frame_end, "%s", json.output);
    char expected[2048];
    int used = snprintf(expected, sizeof expected,
                        "\"function\":\"compute\",\"mangled\":\"compute\",\"offset\":");
    cr_assert(strstr(frame, expected) != NULL && strstr(frame, expected) < inlined, "%s", frame);
    used = snprintf(expected, sizeof expected, "\"file\":\"%s\",\"line\":%u,\"inlined\":[",
                    ours.frames[2].file, ours.frames[2].line);
    for (int i = 0; i < 2; i++)
        used += snprintf(expected + used, sizeof expected - (size_t)used,
                         "%s{\"function\":\"%s\",\"file\":\"%s\",\"line\":%u}", i ? "," : "",
                         ours.frames[i].function, ours.frames[i].file, ours.frames[i].line);
    snprintf(expected + used, sizeof expected - (size_t)used, "]}");
    const char *found = strstr(frame, expected);
    cr_assert(found != NULL && found < frame_end, "want %s in\n%s", expected, frame);
}

/* The fixture's trace mode: "bias 0x...", print_trace_fd, "--", one
 * capture by backtrace_print_fd, "--", the same by backtrace_resolve
 * ("INDEX INLINED FUNCTION FILE:LINE" a frame), "--", the same by
 * backtrace_resolve with BACKTRACE_INDEX_ONLY. */
struct trace_parts {
    struct child_result result;
    unsigned long bias;
    const char *print_trace, *print_fd, *resolve, *resolve_index;
};

static void run_trace(struct trace_parts *parts)
{
    run_fixture("inline_program", "trace", NULL, "index_cache=0", &parts->result);
    assert_exited_with(&parts->result, 0);
    char *text = parts->result.output;
    cr_assert_eq(sscanf(text, "bias 0x%lx", &parts->bias), 1, "%s", text);
    parts->print_trace = strstr(text, "Obtained ");
    char *split = strstr(text, "--\n");
    cr_assert(parts->print_trace != NULL && split != NULL, "%s", text);
    parts->print_fd = split + 3;
    split = strstr(parts->print_fd, "--\n");
    cr_assert_not_null(split, "%s", text);
    parts->resolve = split + 3;
    split = strstr(parts->resolve, "--\n");
    cr_assert_not_null(split, "%s", text);
    parts->resolve_index = split + 3;
}

/* The frame of compute in a trace part: after trace_here's. */
static void compute_chain(const char *part, unsigned long bias, const char *context)
{
    struct chain ours, expected;
    char program[4096];
    fixture_path(program, sizeof program, "inline_program");
    const char *after = parse_text_chain(part, &ours); /* trace_here */
    cr_assert_eq(ours.count, 1, "%s", context);
    cr_assert_str_eq(ours.frames[0].function, "trace_here", "%s", context);
    parse_text_chain(after, &ours);
    /* A return address: named, and given its lines, by its call. */
    addr2line_chain(program, ours.address - 1 - bias, &expected);
    assert_same_chain(&ours, &expected, context);
    cr_assert_eq(ours.count, 3, "%s", context);
}

Test(inline, print_trace_and_print_fd_chains_equal_addr2line, .timeout = 30)
{
    static struct trace_parts parts;
    run_trace(&parts);
    compute_chain(strchr(parts.print_trace, '\n') + 1, parts.bias, parts.result.output);
    compute_chain(parts.print_fd, parts.bias, parts.result.output);
}

/* The frames of index 1 (compute, with its inlined calls) of a resolve
 * part, from PART up to END (NULL: the end), against the chain
 * backtrace_print_fd wrote from the index. */
static void assert_resolved_chain(const struct trace_parts *parts, const char *part,
                                  const char *end)
{
    struct chain ours;
    const char *after = parse_text_chain(parts->print_fd, &ours);
    parse_text_chain(after, &ours);
    const char *line = part;
    int matched = 0;
    for (; line != NULL && *line != '\0' && (end == NULL || line < end);
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        int index, inlined;
        char function[512], place[1024];
        if (sscanf(line, "%d %d %511s %1023s", &index, &inlined, function, place) != 4 ||
            index != 1)
            continue;
        cr_assert_lt(matched, ours.count, "%s", parts->result.output);
        struct chain_frame *frame = &ours.frames[matched];
        char want[1100];
        snprintf(want, sizeof want, "%s:%u", frame->file, frame->line);
        cr_assert_str_eq(function, frame->function, "%s", parts->result.output);
        cr_assert_str_eq(place, want, "%s", parts->result.output);
        cr_assert_eq(inlined, matched < ours.count - 1, "%s", parts->result.output);
        matched++;
    }
    cr_assert_eq(matched, ours.count, "%s", parts->result.output);
}

/* backtrace_resolve (libdwfl) gives the chain the index gives. */
Test(inline, backtrace_resolve_agrees_with_the_index, .timeout = 30)
{
    static struct trace_parts parts;
    run_trace(&parts);
    assert_resolved_chain(&parts, parts.resolve, parts.resolve_index);
}

/* BACKTRACE_INDEX_ONLY reads the same chain out of the index itself; the
 * index keeps no columns, where libdw gives compute's calls theirs, so a
 * column would mean that libdw was asked. */
Test(inline, backtrace_resolve_index_only_gives_the_same_chain, .timeout = 30)
{
    static struct trace_parts parts;
    run_trace(&parts);
    assert_resolved_chain(&parts, parts.resolve_index, NULL);
    int frames = 0;
    for (const char *line = parts.resolve_index; line != NULL && *line != '\0';
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned column;
        cr_assert_eq(sscanf(line, "%*d %*d %*s %*s %u", &column), 1, "%s", line);
        cr_assert_eq(column, 0, "%s", parts.result.output);
        frames++;
    }
    cr_assert_gt(frames, 4, "%s", parts.result.output);
}
