/* test_second_stage.c: the crash handler's second stage (issue 26): a
 * symbolizer started from the handler with a raw clone and execve, and
 * what the report says when it cannot run; and the cold index of a
 * preloaded library, which reads no module at load. Each test crashes
 * tests/fixtures/stage_crash.c for real under the preloaded core library
 * (a static function, two inlined calls), or inline_program, which links
 * it (its index is built at load, as before), and reads what it wrote. */
#include "support.h"

#include <sys/stat.h>

static const char *build_path(const char *name, char *out, size_t size)
{
    const char *tests = getenv("EXECINFO_EX_TESTS");
    cr_assert_not_null(tests, "EXECINFO_EX_TESTS (make test sets it)");
    snprintf(out, size, "%s/%s", tests, name);
    return out;
}

static char crash_options[1024], crash_preload[600];

static void prepare_crash(void *context)
{
    (void)context;
    putenv(crash_options);
    putenv(crash_preload);
}

/* The report of stage_crash MODE with OPTIONS, after a death by SIGSEGV. */
static const char *crash(const char *mode, const char *options)
{
    static struct child_result result;
    char program[512];
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY (make test sets it)");
    build_path("stage_crash", program, sizeof program);
    snprintf(crash_options, sizeof crash_options, "EXECINFO_EX_OPTIONS=handler=1:%s", options);
    snprintf(crash_preload, sizeof crash_preload, "LD_PRELOAD=%s", library);
    char *argv[] = { program, (char *)mode, NULL };
    run_program(program, argv, prepare_crash, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    const char *end = strstr(options, "format=json") != NULL ? "\"threads\":[" : "*** end of report";
    cr_assert(strstr(result.output, end) != NULL, "%s", result.output);
    return result.output;
}

/* The lines of TEXT that start with "#" (the frames), runtime addresses
 * (0x and 9 or more digits) left out: each run has its own. */
static void frames_of(const char *text, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        for (size_t i = 0; line[0] == '#' && i < length && used + 2 < size; i++) {
            if (line[i] == '0' && line[i + 1] == 'x' && i + 11 < length &&
                strspn(line + i + 2, "0123456789abcdef") >= 9) {
                i += 1 + strspn(line + i + 2, "0123456789abcdef");
                continue;
            }
            out[used++] = line[i];
        }
        if (line[0] == '#' && used + 1 < size)
            out[used++] = '\n';
        out[used] = '\0';
        line = end != NULL ? end + 1 : line + length;
    }
}

static void symbolizer_option(char *out, size_t size, const char *more)
{
    char path[512];
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "EXECINFO_EX_BUILD (make test sets it)");
    snprintf(path, sizeof path, "%s/bin/execinfo_ex_symbolize", build);
    snprintf(out, size, "index_cache=0:symbolizer=%s%s", path, more);
}

/* The report of inline_program, which links the library (its index is
 * built at load), crashing with the handler's OPTIONS. */
static const char *linked_crash(const char *options)
{
    static struct child_result result;
    char program[512];
    build_path("inline_program", program, sizeof program);
    char *argv[] = { program, "crash", (char *)options, NULL };
    run_program(program, argv, NULL, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "*** end of report") != NULL, "%s", result.output);
    return result.output;
}

/* Asked about every frame, the stage gives what the index built at load
 * gives: names, inlined calls with their lines, the frames' lines. */
Test(second_stage, gives_the_names_lines_and_inlined_calls_the_index_gives, .timeout = 60)
{
    static char index_only[1 << 14], staged[1 << 14];
    char options[1024];
    symbolizer_option(options, sizeof options, ":second_stage=0");
    frames_of(linked_crash(options), index_only, sizeof index_only);
    symbolizer_option(options, sizeof options, ":second_stage=all");
    const char *report = linked_crash(options);
    frames_of(report, staged, sizeof staged);
    cr_assert(strstr(report, "*** second stage: 5 of 5 addresses resolved by ") != NULL, "%s",
              report);
    cr_assert(strstr(staged, "#0  inlined: deref at tests/fixtures/inline_program.c:") != NULL,
              "%s", staged);
    cr_assert(strstr(staged, "#0  inlined: helper at tests/fixtures/inline_program.c:") != NULL,
              "%s", staged);
    cr_assert(strstr(staged, "(main+0x") != NULL, "%s", staged);
    cr_assert_str_eq(staged, index_only);
}

/* A preloaded library reads no module at load without a warm cache file:
 * the crash asks the stage, which names the static function and gives
 * the inlined calls and every line. */
Test(second_stage, a_cold_crash_gets_names_lines_and_inlined_calls_from_it, .timeout = 60)
{
    static char frames[1 << 14];
    char options[1024];
    symbolizer_option(options, sizeof options, "");
    const char *report = crash("plain", options);
    frames_of(report, frames, sizeof frames);
    cr_assert(strstr(report, "*** second stage: 5 of 5 addresses resolved by ") != NULL, "%s",
              report);
    cr_assert(strstr(frames, "#0  inlined: poke at tests/fixtures/stage_crash.c:") != NULL, "%s",
              frames);
    cr_assert(strstr(frames, "#0  inlined: reach at tests/fixtures/stage_crash.c:") != NULL, "%s",
              frames);
    cr_assert(strstr(frames, "(stage_crash_static.constprop.0+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, "(main+0x") != NULL && strstr(frames, "stage_crash.c:") != NULL,
              "%s", frames);
    cr_assert(strstr(frames, "libc.so.6(__libc_start_call_main+0x") != NULL, "%s", frames);
}

/* Without the stage, a cold crash names the static function from the
 * program's .symtab and libc's exported functions from its .dynsym; no
 * line, no inlined call; the rest as path(+offset). */
Test(second_stage, a_cold_crash_without_it_names_from_the_symbol_tables, .timeout = 60)
{
    static char frames[1 << 14];
    char options[1024];
    symbolizer_option(options, sizeof options, ":second_stage=0");
    const char *report = crash("plain", options);
    frames_of(report, frames, sizeof frames);
    cr_assert(strstr(report, "*** second stage: not used: off (second_stage=0); ") != NULL, "%s",
              report);
    cr_assert(strstr(frames, "#0  /") == frames, "no inlined line first: %s", frames);
    cr_assert(strstr(frames, "(stage_crash_static.constprop.0+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, "(main+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, "libc.so.6(__libc_start_main+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, "libc.so.6(+0x") != NULL, "__libc_start_call_main is local: %s",
              frames);
    cr_assert(strstr(frames, " at ") == NULL, "%s", frames);
}

Test(second_stage, writes_its_outcome_into_the_json_report, .timeout = 60)
{
    char options[1024];
    symbolizer_option(options, sizeof options, ":second_stage=all:format=json");
    const char *report = crash("plain", options);
    cr_assert(strstr(report, "\"second_stage\":{\"outcome\":\"answered\",\"reason\":null,"
                             "\"asked\":5,\"resolved\":5}") != NULL, "%s", report);
    cr_assert(strstr(report, "\"function\":\"poke\",\"file\":\"tests/fixtures/stage_crash.c\"") !=
              NULL, "%s", report);
}

/* A stage that cannot run: the reason in one line, the frames as the
 * index alone names them. */
static void falls_back(const char *mode, const char *more, const char *reason)
{
    static char index_only[1 << 14], fallen[1 << 14];
    char options[1024];
    symbolizer_option(options, sizeof options, ":second_stage=0");
    frames_of(crash(mode, options), index_only, sizeof index_only);
    symbolizer_option(options, sizeof options, more);
    const char *report = crash(mode, options);
    frames_of(report, fallen, sizeof fallen);
    const char *line = strstr(report, "*** second stage: not used: ");
    cr_assert_not_null(line, "%s", report);
    const char *end = strchr(line, '\n');
    cr_assert(strstr(line, reason) != NULL && strstr(line, reason) < end, "want %s:\n%s", reason,
              report);
    cr_assert(strstr(line, "; its frames are as the index names them, else by their files' symbol tables, else path(+offset)\n") ==
              end - strlen("; its frames are as the index names them, else by their files' symbol tables, else path(+offset)"),
              "%s", report);
    cr_assert_str_eq(fallen, index_only);
    cr_assert(strstr(fallen, "(stage_crash_static") != NULL, "%s", fallen);
}

Test(second_stage, a_missing_program_falls_back_with_its_reason, .timeout = 60)
{
    falls_back("plain", ":second_stage=all:symbolizer=/nonexistent/execinfo_ex_symbolize",
               "execve /nonexistent/execinfo_ex_symbolize failed: errno 2 (ENOENT)");
}

Test(second_stage, seccomp_refusing_clone_falls_back_with_its_reason, .timeout = 60)
{
    falls_back("seccomp_clone", ":second_stage=all", "clone failed: errno 1 (EPERM)");
}

Test(second_stage, seccomp_refusing_execve_falls_back_with_its_reason, .timeout = 60)
{
    falls_back("seccomp_execve", ":second_stage=all", "/execinfo_ex_symbolize failed: errno 1 (EPERM)");
}

/* RLIMIT_AS at 1 MiB: the symbolizer's libraries do not fit, the loader
 * gives up (exit 127; an ASan build dies by SIGSEGV first, its shadow
 * memory refused). */
Test(second_stage, no_address_space_falls_back_with_its_reason, .timeout = 60)
{
    falls_back("address_space", ":second_stage=all", "/execinfo_ex_symbolize ");
    const char *report = crash("address_space", "second_stage=all");
    cr_assert(strstr(report, "/execinfo_ex_symbolize exited with status 127 before a whole "
                             "answer;") != NULL ||
              strstr(report, "/execinfo_ex_symbolize was killed by signal 11 before a whole "
                             "answer;") != NULL,
              "%s", report);
}

Test(second_stage, a_program_that_never_answers_is_killed_at_the_deadline, .timeout = 60)
{
    char more[700], silent[512];
    snprintf(more, sizeof more, ":second_stage=all:second_stage_ms=200:symbolizer=%s",
             build_path("silent_symbolizer", silent, sizeof silent));
    /* symbolizer= given twice: the last one counts. */
    falls_back("plain", more, "silent_symbolizer gave no whole answer in 200 ms (killed)");
}

Test(second_stage, an_answer_that_is_not_one_is_malformed, .timeout = 60)
{
    falls_back("plain", ":second_stage=all:symbolizer=/bin/cat", "/bin/cat gave a malformed answer");
}

/* Where the index names every frame, nothing is asked and nothing said. */
Test(second_stage, is_not_started_when_the_index_names_every_frame, .timeout = 60)
{
    char options[1024];
    symbolizer_option(options, sizeof options, ":symbolizer=/nonexistent/execinfo_ex_symbolize");
    const char *report = linked_crash(options);
    cr_assert(strstr(report, "second stage") == NULL, "%s", report);
}

/* ---- the answer from what its addresses need, against the whole modules ---- */

/* PATH's build-id in hex, as readelf -n gives it ("" if none). */
static void build_id_of(const char *path, char *out, size_t size)
{
    char command[1024], line[512];
    snprintf(command, sizeof command, "readelf -n %s", path);
    FILE *in = popen(command, "r");
    cr_assert_not_null(in, "%s", command);
    out[0] = '\0';
    while (fgets(line, sizeof line, in) != NULL) {
        const char *at = strstr(line, "Build ID: ");
        if (at != NULL)
            snprintf(out, size, "%.*s", (int)strcspn(at + 10, " \n"), at + 10);
    }
    pclose(in);
}

/* PATH's .text as readelf -SW gives it: [*FROM, *TO) at link time. */
static void text_of(const char *path, unsigned long *from, unsigned long *to)
{
    char command[1024], line[512];
    unsigned long address = 0, offset = 0, size = 0;
    snprintf(command, sizeof command, "readelf -SW %s", path);
    FILE *in = popen(command, "r");
    cr_assert_not_null(in, "%s", command);
    while (fgets(line, sizeof line, in) != NULL) {
        const char *at = strstr(line, " .text ");
        if (at != NULL && strstr(at, "PROGBITS") != NULL)
            sscanf(strstr(at, "PROGBITS") + 8, "%lx %lx %lx", &address, &offset, &size);
    }
    pclose(in);
    cr_assert_gt(size, 0, "no .text in %s", path);
    *from = address;
    *to = address + size;
}

/* A request about every STEP-th byte of the first BYTES of each module's
 * .text (all of it for 0): the fixtures with inlined calls
 * (inline_program, inline_program_cxx), C++ names (cxx_names), and this
 * library (many units, lines, inlined calls), at bias 0, so that
 * link-time addresses are the request's. Where .text starts differs by
 * architecture and linker. */
static void write_request(const char *path)
{
    static const struct { const char *name; unsigned long bytes, step; } modules[] = {
        { "tests/inline_program", 0x500, 1 },
        { "tests/inline_program_cxx", 0x300, 1 },
        { "tests/cxx_names", 0x500, 1 },
        { "libexecinfo_ex.so.0.1.0", 0, 7 },
    };
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "EXECINFO_EX_BUILD (make test sets it)");
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out, "%s", path);
    fprintf(out, "execinfo_ex_symbolize 1\noptions\t3\t1\t1\n"); /* lines=all */
    for (size_t m = 0; m < sizeof modules / sizeof modules[0]; m++) {
        char file[512], id[128];
        unsigned long from, to;
        snprintf(file, sizeof file, "%s/%s", build, modules[m].name);
        build_id_of(file, id, sizeof id);
        cr_assert(id[0] != '\0', "no build-id in %s", file);
        text_of(file, &from, &to);
        if (modules[m].bytes != 0 && to - from > modules[m].bytes)
            to = from + modules[m].bytes;
        fprintf(out, "module\t%zx\t0\t100000000\t0\t0\t%s\t%s\n", m, id, file);
        for (unsigned long a = from; a < to; a += modules[m].step)
            fprintf(out, "address\t%zx\t%lx\t%lx\n", m, a, a > from ? a - 1 : a);
    }
    fprintf(out, "end\n");
    fclose(out);
}

Test(second_stage, answers_from_what_the_addresses_need_as_from_the_whole_modules,
     .timeout = 120)
{
    char directory[] = "/tmp/execinfo_ex_answer_XXXXXX", command[2048];
    cr_assert_not_null(mkdtemp(directory));
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "EXECINFO_EX_BUILD (make test sets it)");
    snprintf(command, sizeof command, "%s/request", directory);
    write_request(command);
    snprintf(command, sizeof command,
             "cd %s && EXECINFO_EX_OPTIONS=index_cache=0 %s/bin/execinfo_ex_symbolize "
             "< request > fast && EXECINFO_EX_OPTIONS=index_cache=0 "
             "%s/bin/execinfo_ex_symbolize --whole < request > whole && cmp -s fast whole && "
             "grep -c '^F' fast > frames && grep -c '^I' fast > inlined && "
             "cut -f5 fast | grep -q '::'",
             directory, build, build);
    int status = system(command);
    snprintf(command, sizeof command, "rm -rf %s", directory);
    system(command);
    cr_assert_eq(status, 0, "the answers differ, or hold no frame, inlined call or C++ name "
                            "(status %#x)", status);
}

/* ---- glibc's backtrace_symbols_fd in a program it is only preloaded into ---- */

static char fd_options[256], fd_preload[600];

static void prepare_preloaded(void *context)
{
    (void)context;
    putenv(fd_options);
    putenv(fd_preload);
}

/* symbols_fd_program's lines, each without its "[0x...]" (each run has its
 * own addresses), under the library (PRELOADED) or glibc alone. */
static int symbols_fd_lines(int preloaded, char lines[][256], int most)
{
    static struct child_result result;
    char program[512];
    build_path("symbols_fd_program", program, sizeof program);
    snprintf(fd_options, sizeof fd_options, "EXECINFO_EX_OPTIONS=handler=1:index_cache=0");
    snprintf(fd_preload, sizeof fd_preload, "LD_PRELOAD=%s",
             preloaded ? getenv("EXECINFO_EX_LIBRARY") : "");
    char *argv[] = { program, NULL };
    run_program(program, argv, prepare_preloaded, NULL, &result);
    assert_exited_with(&result, 0);
    int count = 0;
    for (char *line = strtok(result.output, "\n"); line != NULL && count < most;
         line = strtok(NULL, "\n")) {
        /* Under qemu-user (make test-aarch64), the host's qemu process
         * inherits LD_PRELOAD and its loader says it cannot preload the
         * aarch64 library; the program itself has it. */
        if (strncmp(line, "ERROR: ld.so: object ", 21) == 0)
            continue;
        /* Under make test-asan the fixture's backtrace is ASan's
         * interceptor, and glibc's, called from it, counts its frame. */
        if (strstr(line, "/libasan.so") != NULL)
            continue;
        char *address = strrchr(line, '[');
        cr_assert_not_null(address, "not a backtrace_symbols_fd line: %s", line);
        snprintf(lines[count++], 256, "%.*s", (int)(address - line), line);
    }
    return count;
}

/* Nothing is read at load (a cold cache, only preloaded) and the program
 * never crashes, so no second stage ever stores it: its frames are named
 * from its file, as glibc names them, and its static function too. */
Test(second_stage, preloaded_backtrace_symbols_fd_names_what_glibcs_names, .timeout = 60)
{
    static char glibc[32][256], ours[32][256];
    cr_assert_not_null(getenv("EXECINFO_EX_LIBRARY"), "make test sets it");
    int glibc_count = symbols_fd_lines(0, glibc, 32);
    int our_count = symbols_fd_lines(1, ours, 32);
    cr_assert(glibc_count >= 4, "glibc gave %d lines", glibc_count);
    cr_assert_eq(our_count, glibc_count, "%d lines against glibc's %d", our_count, glibc_count);
    cr_assert(strstr(ours[0], "(symbols_fd_static+0x") != NULL, "%s (glibc: %s)", ours[0],
              glibc[0]);
    int named = 0;
    for (int i = 0; i < glibc_count; i++) {
        if (strstr(glibc[i], "(+0x") != NULL)
            continue; /* glibc has no name: ours may have one (the static one) */
        cr_assert_str_eq(ours[i], glibc[i], "frame %d", i);
        named++;
    }
    cr_assert(named >= 2, "glibc named %d frames: symbols_fd_exported and main expected", named);
}
