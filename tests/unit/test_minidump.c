/* The minidump (minidump=PATH), judged by Breakpad's own processor: a
 * program with several threads crashes for real in a child; dump_syms
 * writes its symbols; minidump_stackwalk must walk the crashing thread
 * to the frames the text report names, minidump_dump must read every
 * stream, and each module's debug id must come from its build-id. The
 * tools come from tests/tools/get_breakpad_tools.sh (a make dependency,
 * and .ci/run): this test fails without them, it is never skipped. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <execinfo_ex.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "support.h"

#define OTHER_THREADS 4
#define OUTPUT_MAX (1 << 20)

static char tools[4096];

static const char *tool(const char *name)
{
    static char path[8][4200];
    static int next;
    if (tools[0] == '\0') {
        const char *given = getenv("EXECINFO_EX_BREAKPAD"), *build = getenv("EXECINFO_EX_BUILD");
        cr_assert(given != NULL || build != NULL, "EXECINFO_EX_BUILD is not set (run by make)");
        snprintf(tools, sizeof tools, "%s%s", given ? given : build, given ? "" : "/breakpad");
    }
    char *out = path[next++ % 8];
    snprintf(out, sizeof path[0], "%s/%s", tools, name);
    cr_assert(access(out, X_OK) == 0,
              "%s is missing: run sh tests/tools/get_breakpad_tools.sh (make does)", out);
    return out;
}

static const char *fixture(void)
{
    static char path[4096];
    const char *tests = getenv("EXECINFO_EX_TESTS");
    cr_assert_not_null(tests);
    snprintf(path, sizeof path, "%s/minidump_threads", tests);
    return path;
}

/* Run COMMAND with sh; its stdout (stderr too if it says 2>&1) into OUT.
 * Returns its exit status. */
static int shell(const char *command, char *out, size_t capacity)
{
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe, "%s", command);
    size_t used = fread(out, 1, capacity - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

struct crash_setup {
    char options[1024];
    rlim_t file_size_limit;  /* 0: none */
};

static void prepare_crash(void *context)
{
    const struct crash_setup *setup = context;
    setenv("EXECINFO_EX_OPTIONS", setup->options, 1);
    if (setup->file_size_limit != 0) {
        struct rlimit limit = { setup->file_size_limit, setup->file_size_limit };
        setrlimit(RLIMIT_FSIZE, &limit);
    }
}

static void crash_fixture(struct crash_setup *setup, struct child_result *result)
{
    char threads[16];
    snprintf(threads, sizeof threads, "%d", OTHER_THREADS);
    char *argv[] = { (char *)fixture(), threads, NULL };
    run_program(fixture(), argv, prepare_crash, setup, result);
    assert_died_by(result, SIGSEGV);
    cr_assert(strstr(result->output, "MDMP") == NULL, "a minidump went to stderr");
}

static void make_directory(char *path, size_t capacity)
{
    snprintf(path, capacity, "/tmp/execinfo_ex_minidump.XXXXXX");
    cr_assert_not_null(mkdtemp(path));
}

static void remove_tree(const char *directory)
{
    char command[256];
    snprintf(command, sizeof command, "rm -rf '%s' '%s.symbols'", directory, directory);
    cr_assert_eq(system(command), 0);
}

static int entries_in(const char *directory)
{
    DIR *listing = opendir(directory);
    cr_assert_not_null(listing);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(listing)) != NULL;)
        count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(listing);
    return count;
}

/* What follows PREFIX up to the end of its line, in TEXT. */
static void line_after(const char *text, const char *prefix, char *out, size_t capacity)
{
    const char *at = strstr(text, prefix);
    cr_assert_not_null(at, "no '%s' in:\n%s", prefix, text);
    at += strlen(prefix);
    size_t length = strcspn(at, "\n");
    cr_assert_lt(length, capacity);
    memcpy(out, at, length);
    out[length] = '\0';
}

/* ---- the debug id: a build-id as Breakpad's processor shows it ---- */

static void debug_id_from_build_id(const char *hex, char out[34])
{
    unsigned char bytes[16] = { 0 };
    static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
    for (int i = 0; i < 16 && isxdigit((unsigned char)hex[2 * i]) && isxdigit((unsigned char)hex[2 * i + 1]); i++)
        sscanf(hex + 2 * i, "%2hhx", &bytes[i]);
    for (int i = 0; i < 16; i++)
        sprintf(out + 2 * i, "%02X", bytes[order[i]]);
    strcpy(out + 32, "0");
}

Test(minidump, debug_id_is_the_build_id_as_a_guid_with_age_zero)
{
    char id[34];
    debug_id_from_build_id("d466eb1d0562e4bd00112233445566778899aabb", id);
    cr_assert_str_eq(id, "1DEB66D46205BDE40011223344556677" "0");
}

/* ---- the frames: the report's against minidump_stackwalk's ---- */

/* The crashing thread's physical frames in the text report, down to main. */
static int report_frames(const char *report, char names[][128], int capacity)
{
    const char *at = strstr(report, "*** backtrace (");
    cr_assert_not_null(at, "%s", report);
    int count = 0;
    for (at = strchr(at, '\n'); at != NULL && at[1] == '#' && count < capacity; at = strchr(at + 1, '\n')) {
        const char *open = strchr(at, '('), *end = strchr(at + 1, '\n');
        cr_assert(open != NULL && open < end, "%.*s", (int)(end - at), at);
        size_t length = strcspn(open + 1, "+)");
        snprintf(names[count], 128, "%.*s", (int)length, open + 1);
        if (strcmp(names[count++], "main") == 0)
            return count;
    }
    cr_assert_fail("no main in the report's frames:\n%s", report);
    return 0;
}

/* minidump_stackwalk -m: "Crash|reason|address|THREAD", then lines
 * "THREAD|FRAME|module|function|file|line|offset". */
static int stackwalk_frames(const char *walk, char names[][128], int capacity, int *threads)
{
    char crash[256];
    line_after(walk, "\nCrash|", crash, sizeof crash);
    int crashing = atoi(strrchr(crash, '|') + 1), count = 0, last_thread = -1;
    *threads = 0;
    for (const char *line = walk; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
        line += *line == '\n';
        int thread, frame, used = 0;
        if (!isdigit((unsigned char)line[0]) || sscanf(line, "%d|%d|%n", &thread, &frame, &used) != 2 || used == 0)
            continue;
        if (thread != last_thread)
            (*threads)++, last_thread = thread;
        if (thread != crashing || count >= capacity || (count > 0 && strcmp(names[count - 1], "main") == 0))
            continue;
        const char *module_end = strchr(line + used, '|');
        size_t length = strcspn(module_end + 1, "|\n");
        snprintf(names[count++], 128, "%.*s", (int)length, module_end + 1);
    }
    return count;
}

static void check_module_ids(const char *dump_output)
{
    static char readelf[1 << 16];
    int checked = 0, plain_library = 0;
    for (const char *at = strstr(dump_output, "(code_file)"); at != NULL;
         at = strstr(at + 1, "(code_file)")) {
        char path[1024], id[128], command[1200], expected[64];
        const char *quote = strchr(at, '"');
        sscanf(quote + 1, "%1023[^\"]", path);
        const char *id_line = strstr(at, "(debug_identifier)");
        cr_assert_not_null(id_line);
        sscanf(strchr(id_line, '"') + 1, "%127[^\"]", id);
        if (path[0] != '/')
            continue; /* linux-vdso.so.1: no file to read */
        snprintf(command, sizeof command, "readelf -n '%s' 2>/dev/null", path);
        shell(command, readelf, sizeof readelf);
        const char *build_id = strstr(readelf, "Build ID: ");
        if (build_id != NULL) {
            debug_id_from_build_id(build_id + 10, expected);
        } else {
            /* Breakpad's fallback identifier, as its own dump_syms computes it. */
            snprintf(command, sizeof command, "'%s' '%s' 2>/dev/null | head -n 1", tool("dump_syms"), path);
            shell(command, readelf, sizeof readelf);
            cr_assert(sscanf(readelf, "MODULE Linux %*s %63s", expected) == 1, "%s", readelf);
            plain_library += strstr(path, "libminidump_plain.so") != NULL;
        }
        cr_assert_str_eq(id, expected, "debug id of %s: %s, want %s", path, id, expected);
        checked++;
    }
    cr_assert_geq(checked, 4, "%s", dump_output);
    cr_assert_eq(plain_library, 1, "the library without a build-id is not in the module list");
}

/* dump_syms PROGRAM into STORE/NAME/ID/NAME.sym. */
static void write_symbols(const char *program, const char *store)
{
    static char symbols[OUTPUT_MAX];
    char command[8192], id[128], name[256], directory[4800];
    snprintf(command, sizeof command, "'%s' '%s' 2>/dev/null", tool("dump_syms"), program);
    cr_assert_eq(shell(command, symbols, sizeof symbols), 0, "dump_syms failed");
    cr_assert(sscanf(symbols, "MODULE Linux %*s %127s %255s", id, name) == 2, "%.200s", symbols);
    snprintf(directory, sizeof directory, "%s/%s", store, name);
    mkdir(directory, 0700);
    snprintf(directory + strlen(directory), sizeof directory - strlen(directory), "/%s", id);
    cr_assert_eq(mkdir(directory, 0700), 0);
    snprintf(command, sizeof command, "%s/%s.sym", directory, name);
    FILE *file = fopen(command, "w");
    cr_assert_not_null(file);
    fputs(symbols, file);
    fclose(file);
}

Test(minidump, breakpad_walks_the_crash_as_the_report_names_it, .timeout = 120)
{
    static struct child_result result;
    static struct crash_setup setup;
    static char walk[OUTPUT_MAX], dump[OUTPUT_MAX];
    char directory[64], store[128], path[1024], pid[1024], command[4096], pattern[1400];
    char reported[64][128], walked[64][128];

    make_directory(directory, sizeof directory);
    snprintf(setup.options, sizeof setup.options, "minidump=%s", directory);
    crash_fixture(&setup, &result);

    /* The file, named PROGRAM-PID-TIME.dmp, and nothing else in the directory. */
    line_after(result.output, "*** minidump: ", path, sizeof path);
    line_after(result.output, "*** pid ", pid, sizeof pid);
    pid[strcspn(pid, ",")] = '\0';
    snprintf(pattern, sizeof pattern, "^%s/minidump_threads-%s-[0-9]{8}T[0-9]{6}Z\\.dmp$", directory, pid);
    regex_t name;
    cr_assert_eq(regcomp(&name, pattern, REG_EXTENDED | REG_NOSUB), 0);
    cr_assert_eq(regexec(&name, path, 0, NULL, 0), 0, "%s does not match %s", path, pattern);
    regfree(&name);
    cr_assert_eq(entries_in(directory), 1, "a temporary file was left");

    /* minidump_dump reads every stream it looks for, without an error (its
     * log on stderr apart: interleaved, it would cut the lines read below). */
    static char log[OUTPUT_MAX];
    char log_path[1100];
    snprintf(log_path, sizeof log_path, "%s.log", path);
    snprintf(command, sizeof command, "'%s' '%s' 2>'%s'", tool("minidump_dump"), path, log_path);
    int status = shell(command, dump, sizeof dump);
    snprintf(command, sizeof command, "cat '%s'; rm -f '%s'", log_path, log_path);
    shell(command, log, sizeof log);
    cr_assert_eq(status, 0, "minidump_dump failed:\n%s", log);
    cr_assert(strstr(log, "ERROR") == NULL, "%s", log);
    cr_assert(strstr(dump, "MD_LINUX_DSO_DEBUG") && strstr(dump, "MD_LINUX_MAPS") &&
              strstr(dump, "MD_LINUX_ENVIRON") && strstr(dump, "MDRawThreadName") &&
              strstr(dump, "MDException") && strstr(dump, "(csd_version)                              = \"Linux "),
              "a stream is missing:\n%s", dump);
    check_module_ids(dump);

    /* minidump_stackwalk with the program's symbols: the report's frames. */
    snprintf(store, sizeof store, "%s.symbols", directory);
    cr_assert_eq(mkdir(store, 0700), 0);
    write_symbols(fixture(), store);
    snprintf(command, sizeof command, "'%s' -m '%s' '%s' 2>/dev/null", tool("minidump_stackwalk"), path, store);
    cr_assert_eq(shell(command, walk, sizeof walk), 0, "minidump_stackwalk failed:\n%s", walk);
    cr_assert(strstr(walk, "Crash|SIGSEGV /SEGV_MAPERR|0x10|"), "%s", walk);
    int threads;
    int report_count = report_frames(result.output, reported, 64);
    int walk_count = stackwalk_frames(walk, walked, 64, &threads);
    for (int i = 0; i < report_count && i < walk_count; i++)
        cr_assert_str_eq(walked[i], reported[i], "frame #%d: %s, %s\nreport:\n%s\nstackwalk:\n%s", i, walked[i], reported[i],
                         result.output, walk);
    cr_assert_eq(walk_count, report_count, "report:\n%s\nstackwalk:\n%s", result.output, walk);
    cr_assert_geq(report_count, 4);

    /* Every thread of the process: the report lists the others. */
    int others = 0;
    const char *other = strstr(result.output, "*** other threads (");
    if (other != NULL)
        others = atoi(other + strlen("*** other threads ("));
    cr_assert_eq(others, OTHER_THREADS, "%s", result.output);
    cr_assert_eq(threads, 1 + others, "%s", walk);
    remove_tree(directory);
}

/* ---- a dump without a crash writes one too ---- */

static void *sleeping_thread(void *unused)
{
    for (;;)
        pause();
    return unused;
}

/* OTHER_THREADS asleep, one dump to stderr, then on to exit 7. */
static void dump_and_go_on(void *options)
{
    if (backtrace_install_fatal_handler(options) != 0)
        _exit(3);
    for (int i = 0; i < OTHER_THREADS; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, sleeping_thread, NULL) != 0)
            _exit(4);
    }
    struct timespec settle = { 0, 50 * 1000 * 1000 };
    nanosleep(&settle, NULL);
    int written = backtrace_dump_threads(2, 0);
    dprintf(2, "@written=%d\n", written);
    _exit(7);
}

Test(minidump, a_dump_writes_one_that_breakpad_reads_as_dump_requested, .timeout = 120)
{
    static struct child_result result;
    static char walk[OUTPUT_MAX];
    char directory[64], options[200], path[1024], command[4096], crash[256];
    make_directory(directory, sizeof directory);
    snprintf(options, sizeof options, "minidump=%s", directory);
    run_child(dump_and_go_on, options, &result);
    assert_exited_with(&result, 7);
    cr_assert(strstr(result.output, "@written=5\n"), "%s", result.output);
    line_after(result.output, "*** minidump: ", path, sizeof path);
    cr_assert_eq(entries_in(directory), 1, "%s", result.output);
    snprintf(command, sizeof command, "'%s' -m '%s' 2>/dev/null", tool("minidump_stackwalk"), path);
    cr_assert_eq(shell(command, walk, sizeof walk), 0, "minidump_stackwalk failed:\n%s", walk);
    line_after(walk, "\nCrash|", crash, sizeof crash);
    cr_assert(strncmp(crash, "DUMP_REQUESTED|0x", 17) == 0, "%s", walk);
    char names[64][128];
    int threads = 0;
    stackwalk_frames(walk, names, 64, &threads);
    cr_assert_eq(threads, 1 + OTHER_THREADS, "%s", walk);
    remove_tree(directory);
}

Test(minidump, percent_p_in_a_file_path_is_the_pid, .timeout = 60)
{
    static struct child_result result;
    static struct crash_setup setup;
    char directory[64], path[1024], pid[1024], expected[2200];
    struct stat status;
    make_directory(directory, sizeof directory);
    snprintf(setup.options, sizeof setup.options, "minidump=%s/crash-%%p.dmp", directory);
    crash_fixture(&setup, &result);
    line_after(result.output, "*** pid ", pid, sizeof pid);
    pid[strcspn(pid, ",")] = '\0';
    line_after(result.output, "*** minidump: ", path, sizeof path);
    snprintf(expected, sizeof expected, "%s/crash-%s.dmp", directory, pid);
    cr_assert_str_eq(path, expected);
    cr_assert_eq(stat(path, &status), 0);
    cr_assert_gt(status.st_size, 4096);
    cr_assert_eq(status.st_mode & 0777, 0600);
    cr_assert_eq(entries_in(directory), 1, "a temporary file was left");
    remove_tree(directory);
}

Test(minidump, json_report_names_the_file, .timeout = 60)
{
    static struct child_result result;
    static struct crash_setup setup;
    char directory[64], member[1200];
    make_directory(directory, sizeof directory);
    snprintf(setup.options, sizeof setup.options, "format=json:minidump=%s/crash.dmp", directory);
    crash_fixture(&setup, &result);
    snprintf(member, sizeof member, ",\"minidump\":{\"path\":\"%s/crash.dmp\",\"errno\":null}", directory);
    cr_assert(strstr(result.output, member), "%s", result.output);
    remove_tree(directory);
}

/* A failure leaves no file, and the report says which path and why. */
static void assert_fails(const char *option_path, const char *reported_path, rlim_t limit, int error,
                         const char *directory, int entries_left)
{
    static struct child_result result;
    static struct crash_setup setup;
    char expected[2048];
    snprintf(setup.options, sizeof setup.options, "minidump=%s", option_path);
    setup.file_size_limit = limit;
    crash_fixture(&setup, &result);
    snprintf(expected, sizeof expected, "*** minidump: %s failed (errno %d)\n", reported_path, error);
    cr_assert(strstr(result.output, expected), "want '%s' in:\n%s", expected, result.output);
    cr_assert_eq(entries_in(directory), entries_left, "a file was left in %s", directory);
}

Test(minidump, a_write_that_fails_leaves_no_file, .timeout = 60)
{
    char directory[64], path[128];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/small.dmp", directory);
    /* RLIMIT_FSIZE: EFBIG half-way, and the process still dies by SIGSEGV. */
    assert_fails(path, path, 8192, EFBIG, directory, 0);
    remove_tree(directory);
}

Test(minidump, a_missing_directory_is_reported, .timeout = 60)
{
    char directory[64], path[128];
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/missing/crash.dmp", directory);
    assert_fails(path, path, 0, ENOENT, directory, 0);
    remove_tree(directory);
}

Test(minidump, an_existing_file_is_never_replaced, .timeout = 60)
{
    char directory[64], path[128], content[16] = { 0 };
    make_directory(directory, sizeof directory);
    snprintf(path, sizeof path, "%s/fixed.dmp", directory);
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs("keep", file);
    fclose(file);
    assert_fails(path, path, 0, EEXIST, directory, 1);
    file = fopen(path, "r");
    cr_assert_not_null(file);
    cr_assert_eq(fread(content, 1, sizeof content - 1, file), 4);
    fclose(file);
    cr_assert_str_eq(content, "keep");
    remove_tree(directory);
}
