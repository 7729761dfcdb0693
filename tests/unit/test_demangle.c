/* Demangled names (issue 15): a C++ program (tests/fixtures/cxx_names.cpp)
 * crashes for real under the fatal handler; every frame of it is named as
 * c++filt names the frame's mangled symbol, computed here at test time.
 * backtrace_symbols_fd keeps glibc's mangled bytes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "support.h"

#define NAME_MAX_BYTES 1024
#define FRAMES_MAX 32

struct frame_names {
    char function[NAME_MAX_BYTES];
    char mangled[NAME_MAX_BYTES];
    char offset[32];
    int in_fixture;
};

static const char *fixture(void)
{
    static char path[512];
    const char *tests = getenv("EXECINFO_EX_TESTS");
    cr_assert_not_null(tests, "EXECINFO_EX_TESTS not set");
    snprintf(path, sizeof path, "%s/cxx_names", tests);
    return path;
}

static void set_options(void *options)
{
    setenv("EXECINFO_EX_OPTIONS", options, 1);
}

static void run_fixture(const char *mode, const char *options, struct child_result *result)
{
    char *const argv[] = { (char *)"cxx_names", (char *)mode, NULL };
    run_program(fixture(), argv, set_options, (void *)options, result);
}

/* c++filt's output for NAME (the fixture's names are [A-Za-z0-9_.]). */
static void cxxfilt(const char *name, char *out, size_t size)
{
    char command[NAME_MAX_BYTES + 32];
    for (const char *at = name; *at != '\0'; at++)
        cr_assert(strchr("_.$", *at) != NULL || (*at >= '0' && *at <= '9') ||
                  (*at >= 'a' && *at <= 'z') || (*at >= 'A' && *at <= 'Z'), "name %s", name);
    snprintf(command, sizeof command, "c++filt '%s'", name);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    cr_assert_not_null(fgets(out, (int)size, pipe), "c++filt said nothing for %s", name);
    pclose(pipe);
    out[strcspn(out, "\n")] = '\0';
}

/* Whether the fixture's symbol table (nm) has NAME. */
static int fixture_has_symbol(const char *name)
{
    char command[600], line[NAME_MAX_BYTES + 64];
    snprintf(command, sizeof command, "nm '%s'", fixture());
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    int found = 0;
    /* read to the end: nm must not die of SIGPIPE */
    while (fgets(line, sizeof line, pipe) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *last = strrchr(line, ' ');
        found |= last != NULL && strcmp(last + 1, name) == 0;
    }
    pclose(pipe);
    return found;
}

/* The JSON string value after KEY in TEXT, into OUT; NULL becomes "". */
static const char *json_member(const char *text, const char *key, char *out, size_t size)
{
    const char *at = strstr(text, key);
    cr_assert_not_null(at, "no %s in %s", key, text);
    at += strlen(key);
    out[0] = '\0';
    if (*at != '"')
        return at;
    size_t used = 0;
    for (at++; *at != '"' && *at != '\0' && used + 1 < size; at++) {
        if (*at == '\\')
            at++;
        out[used++] = *at;
    }
    out[used] = '\0';
    return at;
}

/* The frames of a JSON crash report. */
static int json_frames(const char *report, struct frame_names *frames)
{
    const char *at = strstr(report, "\"frames\":[");
    const char *end = strstr(report, "],\"modules\"");
    cr_assert(at != NULL && end != NULL, "%s", report);
    int count = 0;
    while (count < FRAMES_MAX && (at = strstr(at, "{\"address\":")) != NULL && at < end) {
        struct frame_names *frame = &frames[count++];
        char module[512];
        json_member(at, "\"module\":", module, sizeof module);
        frame->in_fixture = strstr(module, "cxx_names") != NULL;
        json_member(at, "\"function\":", frame->function, sizeof frame->function);
        json_member(at, "\"mangled\":", frame->mangled, sizeof frame->mangled);
        at = json_member(at, "\"offset\":", frame->offset, sizeof frame->offset);
    }
    return count;
}

/* The function of each "#N  path(function+0xoff) [0x...]" line, with
 * its offset. Returns the count. */
static int text_frames(const char *report, struct frame_names *frames)
{
    int count = 0;
    char marker[16];
    for (;;) {
        snprintf(marker, sizeof marker, "\n#%d ", count);
        const char *line = strstr(report, marker);
        if (line == NULL || count == FRAMES_MAX)
            return count;
        const char *open = strchr(line, '(');
        const char *close = strstr(line, ") [0x");
        const char *eol = strchr(line + 1, '\n');
        cr_assert(open && close && eol && close < eol, "%s", line);
        const char *plus = close;
        while (plus > open && *plus != '+')
            plus--;
        struct frame_names *frame = &frames[count++];
        snprintf(frame->function, sizeof frame->function, "%.*s", (int)(plus - open - 1), open + 1);
        snprintf(frame->offset, sizeof frame->offset, "%.*s", (int)(close - plus - 1), plus + 1);
        /* "#N  PATH(": the module path ends at the first '(' */
        frame->in_fixture = open - line >= 9 && strncmp(open - 9, "cxx_names", 9) == 0;
    }
}

static int fixture_frames_checked(const struct frame_names *frames, int count)
{
    int mangled = 0;
    for (int i = 0; i < count; i++) {
        if (!frames[i].in_fixture)
            continue;
        char expected[NAME_MAX_BYTES];
        cr_assert(fixture_has_symbol(frames[i].mangled), "frame %d: %s is no symbol of the fixture",
                  i, frames[i].mangled);
        cxxfilt(frames[i].mangled, expected, sizeof expected);
        cr_assert_str_eq(frames[i].function, expected, "frame %d (%s)", i, frames[i].mangled);
        mangled += strncmp(frames[i].mangled, "_Z", 2) == 0;
    }
    return mangled;
}

Test(demangle, a_cxx_crash_names_every_frame_as_cxxfilt, .timeout = 60)
{
    static struct child_result json, text;
    run_fixture("crash", "handler=1:format=json:index_cache=0", &json);
    assert_died_by(&json, SIGSEGV);
    static struct frame_names by_json[FRAMES_MAX], by_text[FRAMES_MAX];
    int count = json_frames(json.output, by_json);
    /* the method, the operator, the lambda, the template, the namespace's function */
    cr_assert_geq(fixture_frames_checked(by_json, count), 5, "%s", json.output);
    cr_assert(strstr(json.output, "(anonymous namespace)::Hidden::method(int)"), "%s", json.output);

    run_fixture("crash", "handler=1:index_cache=0", &text);
    assert_died_by(&text, SIGSEGV);
    cr_assert_eq(text_frames(text.output, by_text), count, "%s", text.output);
    for (int i = 0; i < count; i++) {
        if (!by_json[i].in_fixture)
            continue;
        char expected[NAME_MAX_BYTES];
        cxxfilt(by_json[i].mangled, expected, sizeof expected);
        cr_assert_str_eq(by_text[i].function, expected, "frame %d\n%s", i, text.output);
        cr_assert_str_eq(by_text[i].offset, by_json[i].offset, "frame %d", i);
    }
}

Test(demangle, the_cache_gives_the_same_names, .timeout = 60)
{
    char directory[] = "/tmp/execinfo_ex_demangle_XXXXXX", options[128];
    cr_assert_not_null(mkdtemp(directory));
    snprintf(options, sizeof options, "handler=1:format=json:index_cache=%s/c", directory);
    static struct child_result cold, warm;
    static struct frame_names frames[FRAMES_MAX];
    run_fixture("crash", options, &cold);
    run_fixture("crash", options, &warm);
    assert_died_by(&warm, SIGSEGV);
    int count = json_frames(warm.output, frames);
    cr_assert_geq(fixture_frames_checked(frames, count), 5, "%s", warm.output);
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    cr_assert_eq(system(command), 0);
}

Test(demangle, demangle_0_keeps_mangled_names, .timeout = 60)
{
    static struct child_result result;
    static struct frame_names frames[FRAMES_MAX];
    run_fixture("crash", "handler=1:format=json:index_cache=0:demangle=0", &result);
    assert_died_by(&result, SIGSEGV);
    int count = json_frames(result.output, frames), mangled = 0;
    for (int i = 0; i < count; i++) {
        cr_assert_str_eq(frames[i].function, frames[i].mangled, "frame %d", i);
        mangled += frames[i].in_fixture && strncmp(frames[i].mangled, "_Z", 2) == 0;
    }
    cr_assert_geq(mangled, 5, "%s", result.output);
}

/* The lines of TEXT between the line START (or the beginning) and the
 * line STOP, into LINES. */
static int lines_between(char *text, const char *start, const char *stop, char **lines, int max)
{
    char *at = text;
    if (start != NULL) {
        at = strstr(text, start);
        cr_assert_not_null(at, "no %s in\n%s", start, text);
        at += strlen(start);
    }
    int count = 0;
    while (*at != '\0' && count < max) {
        char *eol = strchr(at, '\n');
        cr_assert_not_null(eol);
        *eol = '\0';
        if (strcmp(at, stop) == 0) {
            *eol = '\n';
            break;
        }
        lines[count++] = at;
        at = eol + 1;
    }
    return count;
}

Test(demangle, symbols_fd_keeps_glibc_mangled_bytes, .timeout = 60)
{
    static struct child_result result;
    run_fixture("symbols", "index_cache=0", &result);
    assert_exited_with(&result, 0);
    char *ours[FRAMES_MAX], *theirs[FRAMES_MAX];
    char copy[sizeof result.output];
    memcpy(copy, result.output, sizeof copy);
    int count = lines_between(copy, NULL, "--", ours, FRAMES_MAX);
    char second[sizeof result.output];
    memcpy(second, result.output, sizeof second);
    cr_assert_eq(lines_between(second, "--\n", "++", theirs, FRAMES_MAX), count, "%s",
                 result.output);
    int compared = 0;
    for (int i = 0; i < count; i++) {
        cr_assert_null(strstr(ours[i], "::"), "demangled: %s", ours[i]);
        /* glibc names the exported symbols (-rdynamic): those are byte for byte */
        if (strstr(theirs[i], "(+") == NULL && strchr(theirs[i], '(') != NULL) {
            cr_assert_str_eq(ours[i], theirs[i]);
            compared += strstr(theirs[i], "(_Z") != NULL;
        }
    }
    cr_assert_geq(compared, 2, "%s", result.output);
}

/* print_trace_fd and backtrace_resolve name the frames as c++filt names
 * the symbols backtrace_symbols_fd prints for them. */
Test(demangle, print_trace_and_resolve_name_as_cxxfilt, .timeout = 60)
{
    static struct child_result result;
    run_fixture("symbols", "index_cache=0", &result);
    assert_exited_with(&result, 0);
    static char first[sizeof result.output], second[sizeof result.output],
        third[sizeof result.output];
    memcpy(first, result.output, sizeof first);
    memcpy(second, result.output, sizeof second);
    memcpy(third, result.output, sizeof third);
    char *symbols[FRAMES_MAX], *printed[FRAMES_MAX + 1], *resolved[FRAMES_MAX];
    int count = lines_between(first, NULL, "--", symbols, FRAMES_MAX);
    int printed_count = lines_between(second, "++\n", "##", printed, FRAMES_MAX + 1);
    int resolved_count = lines_between(third, "##\n", "", resolved, FRAMES_MAX);
    cr_assert_eq(printed_count, count + 1, "the header, then the same frames\n%s", result.output);
    cr_assert_eq(resolved_count, count, "%s", result.output);
    int checked = 0;
    for (int i = 0; i < count; i++) {
        char *open = strstr(symbols[i], "(_Z"), *plus = open ? strchr(open, '+') : NULL;
        if (open == NULL || plus == NULL)
            continue;
        char mangled[NAME_MAX_BYTES], expected[NAME_MAX_BYTES + 2];
        snprintf(mangled, sizeof mangled, "%.*s", (int)(plus - open - 1), open + 1);
        cxxfilt(mangled, expected, sizeof expected);
        cr_assert_str_eq(resolved[i], expected, "frame %d", i);
        /* frame 0 of print_trace_fd is the method itself, as frame 0 here */
        size_t length = strlen(expected);
        memmove(expected + 1, expected, length + 1);
        expected[0] = '(';
        cr_assert(strstr(printed[i + 1], expected) != NULL, "frame %d: want %s in %s", i, expected,
                  printed[i + 1]);
        checked++;
    }
    cr_assert_geq(checked, 5, "%s", result.output);
}

/* The fixture symbol NAME's address (nm), link-time. */
static unsigned long symbol_address(const char *name)
{
    char command[600], line[NAME_MAX_BYTES + 64];
    unsigned long address = 0;
    snprintf(command, sizeof command, "nm '%s'", fixture());
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    while (fgets(line, sizeof line, pipe) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *last = strrchr(line, ' ');
        if (last != NULL && strcmp(last + 1, name) == 0)
            address = strtoul(line, NULL, 16);
    }
    pclose(pipe);
    cr_assert_neq(address, 0ul, "no %s in the fixture", name);
    return address;
}

/* execinfo_ex_leaks names a C++ frame of an mtrace file demangled, text
 * and JSON, the JSON with the mangled name beside it. */
Test(demangle, the_leak_tool_names_cxx_frames_as_cxxfilt, .timeout = 60)
{
    static const char mangled[] = "_ZN5outer5innerplENS0_6VectorES1_";
    char expected[NAME_MAX_BYTES], trace[] = "/tmp/execinfo_ex_demangle_trace_XXXXXX";
    cxxfilt(mangled, expected, sizeof expected);
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    FILE *out = fdopen(fd, "w");
    fprintf(out, "= Start\n@ %s:[0x%lx] + 0x1000 0x10\n", fixture(), symbol_address(mangled) + 4);
    fclose(out);
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build);
    char tool[512];
    snprintf(tool, sizeof tool, "%s/bin/execinfo_ex_leaks", build);
    static struct child_result text, json;
    char *const text_argv[] = { tool, trace, NULL };
    char *const json_argv[] = { tool, (char *)"--json", trace, NULL };
    run_program(tool, text_argv, NULL, NULL, &text);
    run_program(tool, json_argv, NULL, NULL, &json);
    unlink(trace);
    char at[NAME_MAX_BYTES + 8], member[2 * NAME_MAX_BYTES];
    snprintf(at, sizeof at, "%s at ", expected);
    cr_assert(strstr(text.output, at) != NULL, "want %s in\n%s", at, text.output);
    snprintf(member, sizeof member, "\"function\":\"%s\",\"mangled\":\"%s\"", expected, mangled);
    cr_assert(strstr(json.output, member) != NULL, "want %s in\n%s", member, json.output);
}
