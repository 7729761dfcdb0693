/* Heap profiles (profile=, backtrace_heap_profile) judged by the viewers
 * people use: a program with known answers (tests/fixtures/
 * profile_program.c prints them) runs under the hooks library, and Debian's
 * `go tool pprof`, without the program's binary (deleted before it runs)
 * and without symbolizing, must give exactly its objects and bytes per
 * site, allocated, in use and at the peak; graphviz renders the profile
 * and the picture names the sites; the folded stacks add up the same. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

#include "support.h"

static char work[256];

static void make_work_dir(void)
{
    snprintf(work, sizeof work, "/tmp/execinfo_ex_profile_test_%d", (int)getpid());
    mkdir(work, 0700);
}

static void remove_work_dir(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf %s", work);
    cr_assert_eq(system(command), 0);
}

TestSuite(profile, .init = make_work_dir, .fini = remove_work_dir, .timeout = 120);

static char *read_whole(const char *path)
{
    FILE *file = fopen(path, "r");
    cr_assert_not_null(file, "%s", path);
    size_t capacity = 1 << 16, used = 0, got;
    char *text = malloc(capacity);
    while ((got = fread(text + used, 1, capacity - 1 - used, file)) > 0) {
        used += got;
        if (used + 1 == capacity)
            text = realloc(text, capacity *= 2);
    }
    text[used] = '\0';
    fclose(file);
    return text;
}

/* Run COMMAND (sh -c) in the work directory with HOME there (go keeps
 * its caches under it), stdout into a string; it must exit 0 within 60 s
 * (an alarm kills it otherwise). */
static char *shell(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *shell(const char *format, ...)
{
    char command[4096], out_path[300], err_path[300];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command, sizeof command, format, arguments);
    va_end(arguments);
    snprintf(out_path, sizeof out_path, "%s/shell.out", work);
    snprintf(err_path, sizeof err_path, "%s/shell.err", work);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        alarm(60);
        if (chdir(work) != 0 || !freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr))
            _exit(126);
        setenv("HOME", work, 1);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    char *err = read_whole(err_path);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "'%s' failed (status 0x%x):\n%s",
              command, status, err);
    free(err);
    return read_whole(out_path);
}

/* What the program says each site's samples hold. */
enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE, PEAK_OBJECTS, PEAK_SPACE,
       MIDDLE_OBJECTS, MIDDLE_SPACE, FIGURES };
static const char *const sample_types[] = { "alloc_objects", "alloc_space", "inuse_objects",
                                            "inuse_space",   "peak_objects", "peak_space" };
#define SAMPLE_TYPES 6
#define SITES_MAX 8

struct site {
    char name[64];
    int line;
    long figures[FIGURES];
};

static struct site sites[SITES_MAX];
static int site_count;

static void parse_expected(const char *text)
{
    site_count = 0;
    for (const char *line = text; line != NULL && *line != '\0';) {
        struct site *s = &sites[site_count];
        long *f = s->figures;
        if (sscanf(line, "site %63s %d %ld %ld %ld %ld %ld %ld %ld %ld", s->name, &s->line, &f[0],
                   &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]) == 10)
            site_count++;
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    cr_assert_eq(site_count, 6, "the program's answers:\n%s", text);
}

static struct site *site_named(const char *name)
{
    for (int s = 0; s < site_count; s++)
        if (strcmp(sites[s].name, name) == 0)
            return &sites[s];
    return NULL;
}

static void setup_tools(void)
{
    /* Debian's golang-go and graphviz (.ci/run installs them). */
    char *found = shell("command -v go && command -v dot || echo missing");
    cr_assert(strstr(found, "missing") == NULL, "go (golang-go) and dot (graphviz) are needed");
    free(found);
}

/* Run the program (a copy in the work directory, deleted afterwards: pprof
 * must not need it) under the hooks library with OPTIONS added to the
 * profile's; returns its stdout, the answers. */
static char *run_profiled(const char *options)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    char *answers = shell("cp %s/profile_program prog && "
                          "EXECINFO_EX_OPTIONS=profile=%s/heap-%%p.out%s%s "
                          "LD_PRELOAD=%s/libexecinfo_ex_hooks.so ./prog %s/middle.out && "
                          "rm prog && mv heap-*.out heap.out",
                          tests, work, options[0] ? ":" : "", options, build, work);
    parse_expected(answers);
    return answers;
}

/* The leaf function of each location of `pprof -raw`, by location id. */
#define LOCATIONS_MAX 4096
static char leaf_names[LOCATIONS_MAX][64];
static char leaf_places[LOCATIONS_MAX][256];

static const char *after(const char *text, const char *marker)
{
    const char *at = strstr(text, marker);
    cr_assert_not_null(at, "'%s' not in:\n%s", marker, text);
    return at + strlen(marker);
}

static void parse_locations(const char *raw)
{
    memset(leaf_names, 0, sizeof leaf_names);
    for (const char *line = after(raw, "\nLocations\n"); *line != '\0' && *line != 'M';) {
        unsigned id;
        char name[64], place[256];
        if (sscanf(line, " %u: %*s M=%*u %63s %255s", &id, name, place) == 3 && id < LOCATIONS_MAX) {
            snprintf(leaf_names[id], sizeof leaf_names[id], "%s", name);
            snprintf(leaf_places[id], sizeof leaf_places[id], "%s", place);
        }
        line = strchr(line, '\n');
        if (line == NULL)
            break;
        line++;
    }
}

/* Sum `pprof -raw`'s samples by their leaf function into TOTALS[site]
 * (each of the six values); OTHER gets the samples of no site. */
static void sum_raw(const char *raw, long totals[SITES_MAX][SAMPLE_TYPES], long *grand)
{
    parse_locations(raw);
    memset(totals, 0, sizeof(long) * SITES_MAX * SAMPLE_TYPES);
    memset(grand, 0, sizeof(long) * SAMPLE_TYPES);
    const char *line = after(after(raw, "\nSamples:\n"), "\n"); /* past the types' line */
    while (*line == ' ' || (*line >= '0' && *line <= '9')) {
        long v[SAMPLE_TYPES];
        unsigned leaf;
        int used = 0;
        cr_assert_eq(sscanf(line, "%ld %ld %ld %ld %ld %ld: %u%n", &v[0], &v[1], &v[2], &v[3],
                            &v[4], &v[5], &leaf, &used), 7, "a sample line: %.80s", line);
        cr_assert_lt(leaf, LOCATIONS_MAX);
        struct site *site = site_named(leaf_names[leaf]);
        for (int t = 0; t < SAMPLE_TYPES; t++) {
            grand[t] += v[t];
            if (site != NULL)
                totals[site - sites][t] += v[t];
        }
        line = strchr(line, '\n');
        if (line == NULL)
            break;
        line++;
    }
}

static void assert_raw_matches(const char *profile, int middle)
{
    char *raw = shell("go tool pprof -symbolize=none -raw %s", profile);
    long totals[SITES_MAX][SAMPLE_TYPES], grand[SAMPLE_TYPES];
    sum_raw(raw, totals, grand);
    for (int s = 0; s < site_count; s++) {
        const long *f = sites[s].figures;
        if (middle) {
            cr_expect_eq(totals[s][INUSE_OBJECTS], f[MIDDLE_OBJECTS], "%s in use (middle)", sites[s].name);
            cr_expect_eq(totals[s][INUSE_SPACE], f[MIDDLE_SPACE], "%s bytes in use (middle)", sites[s].name);
            continue;
        }
        for (int t = 0; t < SAMPLE_TYPES; t++)
            cr_expect_eq(totals[s][t], f[t], "%s %s: pprof %ld, the program %ld", sites[s].name,
                         sample_types[t], totals[s][t], f[t]);
    }
    free(raw);
}

Test(profile, raw_samples_are_the_programs_counts, .init = setup_tools)
{
    free(run_profiled(""));
    assert_raw_matches("heap.out", 0);
    /* The one it asked for halfway: the peak's blocks freed, the large
     * and inlined sites not yet allocated. */
    assert_raw_matches("middle.out", 1);
}

/* The "flat" column of `pprof -top` for FUNCTION: bytes with -unit=B. */
static long top_flat(const char *top, const char *function)
{
    for (const char *line = after(top, "flat%"); (line = strchr(line, '\n')) != NULL;) {
        line++;
        char flat[32], name[128];
        if (sscanf(line, " %31s %*s %*s %*s %*s %127s", flat, name) != 2 || strcmp(name, function) != 0)
            continue;
        return strtol(flat, NULL, 10); /* "1440B" or "60"; "0" */
    }
    return 0;
}

Test(profile, top_gives_each_sites_objects_and_bytes, .init = setup_tools)
{
    free(run_profiled(""));
    for (int t = 0; t < SAMPLE_TYPES; t++) {
        char *top = shell("go tool pprof -symbolize=none -top -nodefraction=0 -nodecount=10000 "
                          "-unit=B -sample_index=%s heap.out", sample_types[t]);
        cr_assert_not_null(strstr(top, sample_types[t]), "%s", top);
        for (int s = 0; s < site_count; s++)
            cr_expect_eq(top_flat(top, sites[s].name), sites[s].figures[t], "%s %s in:\n%s",
                         sites[s].name, sample_types[t], top);
        free(top);
    }
}

Test(profile, locations_carry_lines_inlined_calls_and_build_ids, .init = setup_tools)
{
    free(run_profiled(""));
    char *raw = shell("go tool pprof -symbolize=none -raw heap.out");
    parse_locations(raw);
    for (int s = 0; s < site_count; s++) {
        char place[64];
        snprintf(place, sizeof place, "profile_program.c:%d", sites[s].line);
        int found = 0;
        for (int id = 0; id < LOCATIONS_MAX && !found; id++)
            found = strcmp(leaf_names[id], sites[s].name) == 0 && strstr(leaf_places[id], place);
        cr_expect(found, "%s at %s not in:\n%s", sites[s].name, place, raw);
    }
    /* fill_inlined's location goes on with its caller, a Line of its own. */
    const char *inlined = strstr(raw, " fill_inlined ");
    cr_assert_not_null(inlined, "%s", raw);
    const char *next = strchr(inlined, '\n');
    cr_assert(next != NULL && strncmp(next + 1, "             site_inlined_caller ", 33) == 0,
              "%s", raw);
    /* The program's mapping: its build-id (40 hex digits), and named,
     * with files, lines and inlined calls. */
    const char *mapping = strstr(after(raw, "\nMappings\n"), "/prog ");
    cr_assert_not_null(mapping, "%s", raw);
    char build_id[64] = "", flags[64] = "";
    cr_assert_eq(sscanf(mapping, "/prog %63s %63s", build_id, flags), 2);
    cr_expect_eq(strspn(build_id, "0123456789abcdef"), 40, "%s", build_id);
    cr_expect_str_eq(flags, "[FN][FL][LN][IN]");
    free(raw);
}

Test(profile, svg_names_the_sites, .init = setup_tools)
{
    free(run_profiled(""));
    for (int t = 0; t < SAMPLE_TYPES; t += 3) { /* alloc_objects, inuse_space */
        free(shell("go tool pprof -symbolize=none -svg -nodefraction=0 -sample_index=%s "
                   "-output=heap.svg heap.out", sample_types[t]));
        char path[300];
        snprintf(path, sizeof path, "%s/heap.svg", work);
        char *svg = read_whole(path);
        cr_assert_not_null(strstr(svg, "<svg"), "not an SVG");
        for (int s = 0; s < site_count; s++)
            if (sites[s].figures[t] != 0)
                cr_expect_not_null(strstr(svg, sites[s].name), "%s not in the %s picture",
                                   sites[s].name, sample_types[t]);
        free(svg);
    }
}

/* The totals of every stack, sites and others (the loader's, stdio's),
 * as pprof reads them from a run with the default format. */
static void pprof_totals(long grand[SAMPLE_TYPES])
{
    free(run_profiled(""));
    char *raw = shell("go tool pprof -symbolize=none -raw heap.out");
    long totals[SITES_MAX][SAMPLE_TYPES];
    sum_raw(raw, totals, grand);
    free(raw);
}

/* Folded stacks, outermost first: per site (the last frame of a line) the
 * program's numbers, and in all pprof's totals of the same program. */
Test(profile, folded_stacks_add_up_to_the_same_totals, .init = setup_tools)
{
    long grand[SAMPLE_TYPES];
    pprof_totals(grand);
    for (int t = 0; t < SAMPLE_TYPES; t++) {
        char options[128];
        snprintf(options, sizeof options, "profile_format=folded:profile_sample=%s", sample_types[t]);
        free(run_profiled(options));
        char path[300];
        snprintf(path, sizeof path, "%s/heap.out", work);
        char *folded = read_whole(path);
        long per_site[SITES_MAX] = { 0 }, total = 0;
        for (char *line = folded; *line != '\0';) {
            char *end = strchr(line, '\n');
            cr_assert_not_null(end, "an unterminated line");
            *end = '\0';
            char *space = strrchr(line, ' ');
            cr_assert_not_null(space, "%s", line);
            long value = strtol(space + 1, NULL, 10);
            cr_expect_gt(value, 0, "%s", line);
            *space = '\0';
            char *last = strrchr(line, ';');
            struct site *site = site_named(last != NULL ? last + 1 : line);
            total += value;
            if (site != NULL) {
                per_site[site - sites] += value;
                cr_expect(strncmp(line, "_start;", 7) == 0, "outermost first: %s", line);
                cr_expect_not_null(strstr(line, ";main;"), "%s", line);
            }
            line = end + 1;
        }
        for (int s = 0; s < site_count; s++)
            cr_expect_eq(per_site[s], sites[s].figures[t], "%s %s: folded %ld, the program %ld",
                         sites[s].name, sample_types[t], per_site[s], sites[s].figures[t]);
        cr_expect_eq(total, grand[t], "%s: folded %ld, pprof %ld", sample_types[t], total, grand[t]);
        free(folded);
    }
}

/* The total of a folded alloc_objects profile of a run with OPTIONS. */
static long folded_objects(const char *options)
{
    char all[256], path[300];
    snprintf(all, sizeof all, "profile_format=folded:profile_sample=alloc_objects:%s", options);
    free(run_profiled(all));
    snprintf(path, sizeof path, "%s/heap.out", work);
    char *folded = read_whole(path);
    long total = 0;
    for (char *line = folded; *line != '\0';) {
        char *end = strchr(line, '\n');
        cr_assert_not_null(end, "an unterminated line");
        *end = '\0';
        char *space = strrchr(line, ' ');
        cr_assert_not_null(space, "%s", line);
        total += strtol(space + 1, NULL, 10);
        line = end + 1;
    }
    free(folded);
    return total;
}

/* The index the core library builds at load (index_cache=0: every run)
 * allocates through libdw, deep under the loader's dlopen and its own
 * calls: stacks cut at 4 frames lose the library's frame, and are still
 * the library's, in no profile (aarch64's loader is 16 frames deep under
 * dlopen: the default heap_frames cut it there). */
Test(profile, a_stack_cut_short_of_the_librarys_frame_is_still_the_librarys,
     .init = setup_tools)
{
    long whole = folded_objects("index_cache=0");
    long cut = folded_objects("index_cache=0:heap_frames=4");
    cr_assert_gt(whole, 0);
    cr_assert_eq(cut, whole, "alloc_objects: %ld with 4 frames, %ld with the default", cut, whole);
}

/* execinfo_ex_heap --profile: a profiler, as heaptrack runs one: the
 * profile (a relative FILE is the current directory's), the same answers. */
Test(profile, heap_command_profiles, .init = setup_tools)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    char *answers = shell("cp %s/profile_program prog && unset EXECINFO_EX_OPTIONS && "
                          "EXECINFO_EX_HOOKS_LIBRARY=%s/libexecinfo_ex_hooks.so "
                          "%s/bin/execinfo_ex_heap --profile=heap.out ./prog %s/middle.out && rm prog",
                          tests, build, build, work);
    parse_expected(answers);
    free(answers);
    assert_raw_matches("heap.out", 0);
}

/* Its defaults: none of the checker's costs, unless asked for (a flag, or
 * EXECINFO_EX_OPTIONS, which come after them). */
Test(profile, heap_command_is_a_profiler_unless_asked)
{
    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "set by make test");
    char *options = shell("unset EXECINFO_EX_OPTIONS && EXECINFO_EX_HOOKS_LIBRARY=%s/libexecinfo_ex_hooks.so "
                          "%s/bin/execinfo_ex_heap --profile=p.out sh -c 'echo \"$EXECINFO_EX_OPTIONS\"'",
                          build, build);
    char expected[600];
    snprintf(expected, sizeof expected, "guard=0:quarantine=0:free_fill=off:exit_check=0:profile=%s/p.out\n",
             work);
    cr_expect_str_eq(options, expected);
    free(options);
    options = shell("EXECINFO_EX_OPTIONS=quarantine=1M EXECINFO_EX_HOOKS_LIBRARY=%s/libexecinfo_ex_hooks.so "
                    "%s/bin/execinfo_ex_heap -g 16 --profile=p.out sh -c 'echo \"$EXECINFO_EX_OPTIONS\"'",
                    build, build);
    snprintf(expected, sizeof expected,
             "guard=0:quarantine=0:free_fill=off:exit_check=0:quarantine=1M:guard=16:profile=%s/p.out\n",
             work);
    cr_expect_str_eq(options, expected);
    free(options);
    /* A checker without --profile: no such defaults. */
    options = shell("unset EXECINFO_EX_OPTIONS && EXECINFO_EX_HOOKS_LIBRARY=%s/libexecinfo_ex_hooks.so "
                    "%s/bin/execinfo_ex_heap sh -c 'echo \"$EXECINFO_EX_OPTIONS\"'", build, build);
    cr_expect_str_eq(options, "\n");
    free(options);
}

/* dump_signal= with profile=: a profile of that moment, written by the
 * hook layer's own thread while the program runs on. */
Test(profile, dump_signal_writes_a_profile, .init = setup_tools)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    char *answers = shell("cp %s/profile_program prog && "
                          "EXECINFO_EX_OPTIONS=profile=%s/dumped.out:dump_signal=USR2:report=%s/dump.txt "
                          "LD_PRELOAD=%s/libexecinfo_ex_hooks.so ./prog %s/middle.out %d "
                          "%s/dumped.out %s/dump.out && rm prog",
                          tests, work, work, build, work, SIGUSR2, work, work);
    parse_expected(answers);
    free(answers);
    assert_raw_matches("dump.out", 1);
    /* The dump itself is still written, and names the profile's thread. */
    char path[300];
    snprintf(path, sizeof path, "%s/dump.txt", work);
    char *dump = read_whole(path);
    cr_expect_not_null(strstr(dump, "execinfo-prof"), "%s", dump);
    free(dump);
}

/* C++: functions demangled (namespace, class, parameter types), the
 * standard library's inlined templates as lines of their own. */
Test(profile, cxx_names_are_demangled_with_their_inlined_calls, .init = setup_tools)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    free(shell("cp %s/profile_program_cxx prog && EXECINFO_EX_OPTIONS=profile=%s/heap.out "
               "LD_PRELOAD=%s/libexecinfo_ex_hooks.so ./prog && rm prog", tests, work, build));
    char *traces = shell("go tool pprof -symbolize=none -traces -sample_index=alloc_objects heap.out");
    cr_expect_not_null(strstr(traces, "             shop::Cart::add(int, char)\n"), "%s", traces);
    cr_expect_not_null(strstr(traces, "operator new(unsigned long)"), "%s", traces);
    cr_expect_not_null(strstr(traces, ">::push_back("), "%s", traces);
    cr_expect_not_null(strstr(traces, ") (inline)\n             shop::Cart::add(int, char)\n"),
                       "push_back inlined into Cart::add:\n%s", traces);
    cr_expect_null(strstr(traces, "_ZN"), "nothing mangled:\n%s", traces);
    free(traces);
}

/* execinfo_ex_leaks --format=pprof|folded: the same program traced
 * (MALLOC_TRACE with stacks, mtrace_at_load.so), the trace turned into a
 * profile while the program still exists (the tool names frames from its
 * file), then the program deleted: pprof must give exactly the program's
 * allocated and in-use objects and bytes per site, and the folded lines
 * of each sample type add up to the same per site and in all. A trace
 * has no peak: those values are 0. The tool names a frame by its physical
 * function, so fill_inlined's blocks are its caller's. */
static void run_traced_into_leaks(void)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    char *answers = shell("cp %s/profile_program prog && "
                          "EXECINFO_EX_OPTIONS=mtrace_frames=64 MALLOC_TRACE=%s/heap.trace "
                          "LD_PRELOAD='%s/libexecinfo_ex_hooks.so %s/execinfo_ex/mtrace_at_load.so' "
                          "./prog %s/middle.out", tests, work, build, build, work);
    parse_expected(answers);
    free(answers);
    struct site *inlined = site_named("fill_inlined");
    cr_assert_not_null(inlined);
    snprintf(inlined->name, sizeof inlined->name, "site_inlined_caller");
    /* Status 1: memory was left, as the program leaves it on purpose. */
    free(shell("L=%s/bin/execinfo_ex_leaks; "
               "{ $L --format=pprof -o leaks.pb.gz heap.trace; test $? = 1; } && "
               "for t in alloc_objects alloc_space inuse_objects inuse_space; do "
               "{ $L --format=folded --sample=$t heap.trace > leaks.$t; test $? = 1; } || exit 1; "
               "done && rm prog", build));
}

static long folded_sums(const char *name, long per_site[SITES_MAX])
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", work, name);
    char *folded = read_whole(path);
    long total = 0;
    memset(per_site, 0, sizeof(long) * SITES_MAX);
    for (char *line = folded; *line != '\0';) {
        char *end = strchr(line, '\n');
        cr_assert_not_null(end, "an unterminated line");
        *end = '\0';
        char *space = strrchr(line, ' ');
        cr_assert_not_null(space, "%s", line);
        long value = strtol(space + 1, NULL, 10);
        *space = '\0';
        char *last = strrchr(line, ';');
        struct site *site = site_named(last != NULL ? last + 1 : line);
        total += value;
        if (site != NULL)
            per_site[site - sites] += value;
        line = end + 1;
    }
    free(folded);
    return total;
}

/* Only go: this test draws no picture. */
static void setup_go(void)
{
    char *found = shell("command -v go || echo missing");
    cr_assert(strstr(found, "missing") == NULL, "go (golang-go) is needed");
    free(found);
}

Test(profile, leaks_tool_profiles_a_trace, .init = setup_go)
{
    run_traced_into_leaks();
    char *raw = shell("go tool pprof -symbolize=none -raw leaks.pb.gz");
    long totals[SITES_MAX][SAMPLE_TYPES], grand[SAMPLE_TYPES];
    sum_raw(raw, totals, grand);
    free(raw);
    for (int s = 0; s < site_count; s++)
        for (int t = 0; t < SAMPLE_TYPES; t++)
            cr_expect_eq(totals[s][t], t < PEAK_OBJECTS ? sites[s].figures[t] : 0,
                         "%s %s: pprof %ld, the program %ld", sites[s].name, sample_types[t],
                         totals[s][t], sites[s].figures[t]);
    for (int t = 0; t < PEAK_OBJECTS; t++) {
        char *top = shell("go tool pprof -symbolize=none -top -nodefraction=0 -nodecount=10000 "
                          "-unit=B -sample_index=%s leaks.pb.gz", sample_types[t]);
        for (int s = 0; s < site_count; s++)
            cr_expect_eq(top_flat(top, sites[s].name), sites[s].figures[t], "%s %s in:\n%s",
                         sites[s].name, sample_types[t], top);
        free(top);
        char name[64];
        long per_site[SITES_MAX];
        snprintf(name, sizeof name, "leaks.%s", sample_types[t]);
        long total = folded_sums(name, per_site);
        for (int s = 0; s < site_count; s++)
            cr_expect_eq(per_site[s], sites[s].figures[t], "%s %s: folded %ld, the program %ld",
                         sites[s].name, sample_types[t], per_site[s], sites[s].figures[t]);
        cr_expect_eq(total, grand[t], "%s: folded %ld, pprof %ld", sample_types[t], total, grand[t]);
    }
}

/* The build tree's execinfo_ex_heap finds its own siblings (the hooks
 * library, mtrace_at_load.so) beside itself, not at the install path:
 * --leaks traces the program with no EXECINFO_EX_HOOKS_LIBRARY set. */
Test(profile, build_tree_heap_command_traces_leaks)
{
    const char *tests = getenv("EXECINFO_EX_TESTS"), *build = getenv("EXECINFO_EX_BUILD");
    cr_assert(tests != NULL && build != NULL, "set by make test");
    char *answers = shell("unset EXECINFO_EX_HOOKS_LIBRARY LD_PRELOAD; "
                          "%s/bin/execinfo_ex_heap --leaks=run.trace %s/profile_program middle.out",
                          build, tests);
    parse_expected(answers);
    free(answers);
    char *summary = shell("%s/bin/execinfo_ex_leaks --summary run.trace; test $? = 1", build);
    long bytes = 0, blocks = 0;
    cr_assert_eq(sscanf(summary, "%ld bytes in %ld blocks", &bytes, &blocks), 2, "%s", summary);
    /* At least what the program keeps on purpose at its exit. */
    long kept = 0, kept_blocks = 0;
    for (int s = 0; s < site_count; s++) {
        kept += sites[s].figures[INUSE_SPACE];
        kept_blocks += sites[s].figures[INUSE_OBJECTS];
    }
    cr_expect_geq(bytes, kept, "%s", summary);
    cr_expect_geq(blocks, kept_blocks, "%s", summary);
    free(summary);
}
