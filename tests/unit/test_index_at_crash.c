/* test_index_at_crash.c: a preloaded library leaves the index to the crash
 * (issue 26, src/symbolize/index_at_crash.c). The load lists no module
 * and opens no cache file; the crash handler lists the modules from the
 * loader's list and reads the cache files a load would have read. Each
 * test runs tests/fixtures/stage_crash.c, which knows nothing of
 * execinfo_ex, under the preloaded core library, and reads what it wrote;
 * index_at_load=1 (the index built at load, as before) is the reference.
 * second_stage=0 everywhere: a name, line or inlined call the report
 * gives came from the index, not from a symbolizer. */
#include "support.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

static char crash_options[1024], crash_preload[600];

static void prepare(void *context)
{
    (void)context;
    putenv(crash_options);
    putenv(crash_preload);
}

/* What stage_crash ARG1 [ARG2] printed under the preloaded library with
 * the handler's OPTIONS; its status in *RESULT. */
static struct child_result *run_stage_crash(const char *arg1, const char *arg2, const char *options)
{
    static struct child_result result;
    char program[512];
    const char *tests = getenv("EXECINFO_EX_TESTS");
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(tests, "EXECINFO_EX_TESTS (make test sets it)");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY (make test sets it)");
    snprintf(program, sizeof program, "%s/stage_crash", tests);
    snprintf(crash_options, sizeof crash_options, "EXECINFO_EX_OPTIONS=handler=1:second_stage=0:%s",
             options);
    snprintf(crash_preload, sizeof crash_preload, "LD_PRELOAD=%s", library);
    char *argv[] = { program, (char *)arg1, (char *)arg2, NULL };
    run_program(program, argv, prepare, NULL, &result);
    return &result;
}

/* The frame lines of TEXT, runtime addresses (0x and 9 or more digits)
 * left out: each run has its own. */
static void frames_of(const char *text, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        for (size_t i = 0; line[0] == '#' && i < length && used + 2 < size; i++) {
            size_t digits = line[i] == '0' && line[i + 1] == 'x' ? strspn(line + i + 2, "0123456789abcdef") : 0;
            if (digits >= 9) {
                i += 1 + digits;
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

/* The frames of a crash of stage_crash ARG1 [ARG2] with OPTIONS. */
static void crash_frames(const char *arg1, const char *arg2, const char *options, char *out,
                         size_t size)
{
    struct child_result *result = run_stage_crash(arg1, arg2, options);
    assert_died_by(result, SIGSEGV);
    cr_assert(strstr(result->output, "*** end of report") != NULL, "%s", result->output);
    frames_of(result->output, out, size);
}

static char directory[64];

static void fresh_directory(void)
{
    snprintf(directory, sizeof directory, "/tmp/execinfo_ex_at_crash-XXXXXX");
    cr_assert_not_null(mkdtemp(directory));
}

static void remove_directory(void)
{
    DIR *listing = opendir(directory);
    cr_assert_not_null(listing);
    for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        if (entry->d_name[0] != '.')
            unlink(path);
    }
    closedir(listing);
    rmdir(directory);
}

/* The reference: the index built at load with the cache in DIRECTORY
 * (which it fills: the later runs find it warm). */
static void reference_frames(const char *arg1, const char *arg2, char *out, size_t size)
{
    char options[256];
    snprintf(options, sizeof options, "index_cache=%s:index_at_load=1", directory);
    crash_frames(arg1, arg2, options, out, size);
}

/* Warm: the crash reads the cache files the load left unread, and names
 * every frame as the index built at load does: the static function, both
 * inlined calls with their lines, main's line, libc's functions. Without
 * them (no second stage), a frame would lack its line. */
Test(index_at_crash, a_warm_crash_names_every_frame_as_a_load_would, .timeout = 60)
{
    static char at_load[1 << 14], at_crash[1 << 14];
    char options[256];
    fresh_directory();
    reference_frames("plain", NULL, at_load, sizeof at_load);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("plain", NULL, options, at_crash, sizeof at_crash);
    remove_directory();
    cr_assert(strstr(at_load, "#0  inlined: poke at tests/fixtures/stage_crash.c:") != NULL, "%s",
              at_load);
    cr_assert(strstr(at_load, "(stage_crash_static.constprop.0+0x") != NULL, "%s", at_load);
    cr_assert(strstr(at_load, "(main+0x") != NULL, "%s", at_load);
    cr_assert_str_eq(at_crash, at_load);
}

/* A sandbox that refuses process_vm_readv: the loader's list is read
 * where /proc/self/maps shows it readable, and the crash names what a
 * load would. */
Test(index_at_crash, a_crash_where_process_vm_readv_is_refused_names_every_frame, .timeout = 60)
{
    static char at_load[1 << 14], at_crash[1 << 14];
    char options[256];
    fresh_directory();
    reference_frames("seccomp_vm_readv", NULL, at_load, sizeof at_load);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("seccomp_vm_readv", NULL, options, at_crash, sizeof at_crash);
    remove_directory();
    cr_assert(strstr(at_load, "(stage_crash_static.constprop.0+0x") != NULL, "%s", at_load);
    cr_assert(strstr(at_load, "(main+0x") != NULL, "%s", at_load);
    cr_assert_str_eq(at_crash, at_load);
}

/* Cold (an empty cache directory): with no second stage, the crash names
 * what the modules' symbol tables name, as it did when the load listed
 * the modules without reading them: the program's static function, and
 * libc's exported functions (its local ones are in its debug file). */
Test(index_at_crash, a_cold_crash_names_from_the_symbol_tables, .timeout = 60)
{
    static char frames[1 << 14];
    char options[256];
    fresh_directory();
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("plain", NULL, options, frames, sizeof frames);
    remove_directory();
    cr_assert(strstr(frames, "(stage_crash_static.constprop.0+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, "libc.so.6(__libc_start_main+0x") != NULL, "%s", frames);
    cr_assert(strstr(frames, " at ") == NULL, "no line without the index or the stage:\n%s", frames);
}

/* A module loaded by dlopen after the load is in the loader's list at the
 * crash: named, with its static function, as a load would name it. */
Test(index_at_crash, a_module_loaded_after_the_start_is_named, .timeout = 60)
{
    static char at_load[1 << 14], at_crash[1 << 14];
    char options[256];
    const char *library = getenv("FIXTURE_LIB");
    cr_assert_not_null(library, "FIXTURE_LIB (make test sets it)");
    fresh_directory();
    reference_frames("dlopen", library, at_load, sizeof at_load);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("dlopen", library, options, at_crash, sizeof at_crash);
    remove_directory();
    cr_assert(strstr(at_load, "fixture_lib.so(fixture_crash_inner+0") != NULL, "%s", at_load);
    cr_assert(strstr(at_load, "fixture_lib.so(fixture_crash+0x") != NULL, "%s", at_load);
    cr_assert_str_eq(at_crash, at_load);
}

/* The load opens nothing: no descriptor of the program names the cache
 * directory, where the index built at load holds it open. */
Test(index_at_crash, the_load_opens_no_cache_directory, .timeout = 60)
{
    char options[256];
    fresh_directory();
    snprintf(options, sizeof options, "index_cache=%s:index_at_load=1", directory);
    struct child_result *result = run_stage_crash("fds", NULL, options);
    assert_exited_with(result, 0);
    cr_assert(strstr(result->output, directory) != NULL, "the index built at load opens it:\n%s",
              result->output);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    result = run_stage_crash("fds", NULL, options);
    remove_directory();
    assert_exited_with(result, 0);
    cr_assert(strstr(result->output, "fd ") != NULL, "%s", result->output);
    cr_assert(strstr(result->output, directory) == NULL, "%s", result->output);
}

/* main starts with errno 0 (C's promise), whatever the load did: the
 * install asks getauxval for entries a kernel may not give (AT_SYSINFO_EHDR
 * under qemu-user, AT_MINSIGSTKSZ on x86 before Linux 5.14), and glibc
 * sets ENOENT for those; the preloaded library must not hand it to the
 * program. */
Test(index_at_crash, main_starts_with_errno_0_under_the_preloaded_library, .timeout = 60)
{
    struct child_result *result = run_stage_crash("errno", NULL, "index_cache=0");
    assert_exited_with(result, 0);
    cr_assert(strstr(result->output, "errno at main: 0\n") != NULL, "%s", result->output);
}

/* A program's own alternate stack of 12 KiB (it replaced the handler's):
 * the build fits in it, and the crash names what a load would. */
Test(index_at_crash, a_crash_on_a_small_alternate_stack_names_every_frame, .timeout = 60)
{
    static char at_load[1 << 14], at_crash[1 << 14];
    char options[256];
    fresh_directory();
    reference_frames("own_altstack", NULL, at_load, sizeof at_load);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("own_altstack", NULL, options, at_crash, sizeof at_crash);
    remove_directory();
    cr_assert(strstr(at_load, "(stage_crash_static.constprop.0+0x") != NULL, "%s", at_load);
    cr_assert_str_eq(at_crash, at_load);
}

/* glibc's backtrace_symbols_fd, which the preloaded library replaces,
 * called from a program's own SIGSEGV handler on an alternate stack of
 * 8 KiB above the kernel's signal frame: the first call builds the
 * snapshot there, and names the frames. */
Test(index_at_crash, backtrace_symbols_fd_on_an_8_kib_stack_names_the_frames, .timeout = 60)
{
    char options[256];
    fresh_directory();
    snprintf(options, sizeof options, "index_cache=%s:index_at_load=1", directory);
    struct child_result *result = run_stage_crash("plain", NULL, options); /* fills the cache */
    assert_died_by(result, SIGSEGV);
    snprintf(options, sizeof options, "index_cache=%s", directory);
    result = run_stage_crash("symbols_fd_small", NULL, options);
    remove_directory();
    assert_exited_with(result, 3);
    cr_assert(strstr(result->output, "stage_crash(stage_crash_static.constprop.0+0x") != NULL, "%s",
              result->output);
    cr_assert(strstr(result->output, "stage_crash(main+0x") != NULL, "%s", result->output);
}

/* Files whose stamp a copy lost (every .idx file's mtime nanoseconds set
 * to 0): a load checks them whole at once; the crash checks them whole at
 * their first use, and names what a load would, lines and inlined calls
 * too. */
static void lose_stamps(void)
{
    DIR *listing = opendir(directory);
    cr_assert_not_null(listing);
    int changed = 0;
    for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
        size_t length = strlen(entry->d_name);
        struct timespec times[2] = { { 0, UTIME_OMIT }, { 1700000000, 0 } };
        if (length > 4 && strcmp(entry->d_name + length - 4, ".idx") == 0)
            changed += utimensat(dirfd(listing), entry->d_name, times, 0) == 0;
    }
    closedir(listing);
    cr_assert_gt(changed, 1, "the reference run stored files");
}

Test(index_at_crash, a_warm_crash_reads_files_whose_stamp_was_lost, .timeout = 60)
{
    static char at_load[1 << 14], at_crash[1 << 14];
    char options[256];
    fresh_directory();
    reference_frames("plain", NULL, at_load, sizeof at_load);
    lose_stamps();
    snprintf(options, sizeof options, "index_cache=%s", directory);
    crash_frames("plain", NULL, options, at_crash, sizeof at_crash);
    remove_directory();
    cr_assert(strstr(at_load, "#0  inlined: poke at tests/fixtures/stage_crash.c:") != NULL, "%s",
              at_load);
    cr_assert_str_eq(at_crash, at_load);
}
