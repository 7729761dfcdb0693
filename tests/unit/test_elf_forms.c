/* The ELF files users ship, loaded for real and named through the public
 * API: compressed debug sections (zlib, zlib-gnu, zstd), a separate debug
 * file by build-id (itself compressed) and by debuglink, no section
 * headers, and a module truncated, replaced or deleted on disk while it is
 * loaded. Each gives the right name, or the clean fallback path(+0xoffset)
 * with the right offset - never another function's name, never a crash.
 * The files are made here from tests/fixtures/fixture_lib.c. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <sys/stat.h>

#include "support.h"

static char work[256];
static char source_root[512];   /* the checkout: make test runs in it */

static int shell(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int shell(const char *format, ...)
{
    char command[4096];
    int at = snprintf(command, sizeof command, "cd %s && ", work);
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command + at, sizeof command - (size_t)at, format, arguments);
    va_end(arguments);
    return system(command);
}

#define SHELL_OK(...) cr_assert_eq(shell(__VA_ARGS__), 0, "shell command failed")

static void make_work_dir(void)
{
    snprintf(work, sizeof work, "/tmp/execinfo_ex_elf_forms_%d", (int)getpid());
    mkdir(work, 0700);
    cr_assert_not_null(getcwd(source_root, sizeof source_root));
}

static void remove_work_dir(void)
{
    shell("cd / && rm -rf %s", work);
}

/* Lines for every module, not only the program's (the default). The index
 * reads its options when it is first built, at the first load below. */
__attribute__((constructor)) static void lines_for_every_module(void)
{
    setenv("EXECINFO_EX_OPTIONS", "lines=all", 1);
}

TestSuite(elf_forms, .init = make_work_dir, .fini = remove_work_dir, .timeout = 60);

#define FIXTURE_SOURCE "tests/fixtures/fixture_lib.c"

/* Build lib.so in the work directory with extra compiler FLAGS. */
static void build_fixture(const char *flags)
{
    SHELL_OK("cc -O1 -g -fPIC -shared %s %s/" FIXTURE_SOURCE " -o lib.so", flags, source_root);
}

struct loaded {
    void *handle;
    void *helper;          /* fixture_static_helper: static, so only .symtab names it */
    void *exported;        /* fixture_function, in .dynsym too */
    uintptr_t base;
};

static struct loaded load(const char *name)
{
    char path[512];
    struct loaded loaded;
    snprintf(path, sizeof path, "%s/%s", work, name);
    loaded.handle = dlopen(path, RTLD_NOW);
    cr_assert_not_null(loaded.handle, "%s", dlerror());
    void *(*address)(void) = (void *(*)(void))dlsym(loaded.handle, "fixture_address");
    loaded.exported = dlsym(loaded.handle, "fixture_function");
    cr_assert_not_null(address);
    cr_assert_not_null(loaded.exported);
    loaded.helper = address();
    struct link_map *map;
    cr_assert_eq(dlinfo(loaded.handle, RTLD_DI_LINKMAP, &map), 0);
    loaded.base = map->l_addr;
    cr_assert_eq(backtrace_refresh_index(), 0);
    return loaded;
}

/* Load one more module, so that the index is stale and the refresh reads
 * every module file again. */
static void rebuild_index(void)
{
    static int serial;
    char name[64];
    snprintf(name, sizeof name, "trigger%d.so", serial++);
    SHELL_OK("cp '%s' %s", getenv("FIXTURE_LIB"), name);
    load(name);
}

/* backtrace_symbols's line for ADDRESS (+2: inside the function, as a
 * return address would be), malloc'd. */
static char *symbol_line(void *address)
{
    void *frames[1] = { (char *)address + 2 };
    char **lines = backtrace_symbols(frames, 1);
    cr_assert_not_null(lines);
    char *line = strdup(lines[0]);
    free(lines);
    return line;
}

/* The right name, or the fallback that names the module and the offset
 * (with a message on stderr when neither). */
static int line_is_named_or_fallback(const struct loaded *loaded, void *address,
                                     const char *function, const char *module)
{
    char *line = symbol_line(address);
    char named[128], fallback[256];
    snprintf(named, sizeof named, "(%s+0x", function);
    snprintf(fallback, sizeof fallback, "%s(+0x%lx)", module,
             (unsigned long)((uintptr_t)address + 2 - loaded->base));
    int good = strstr(line, named) != NULL || strstr(line, fallback) != NULL;
    if (getenv("ELF_FORMS_SHOW"))   /* to see which of the two a form gives */
        fprintf(stderr, "%s\n", line);
    if (!good)
        fprintf(stderr, "'%s' is neither %s... nor %s\n", line, named, fallback);
    free(line);
    return good;
}

static void assert_named_or_fallback(const struct loaded *loaded, void *address,
                                     const char *function, const char *module)
{
    cr_assert(line_is_named_or_fallback(loaded, address, function, module));
}

static void assert_named(void *address, const char *function)
{
    char *line = symbol_line(address);
    char named[128];
    snprintf(named, sizeof named, "(%s+0x", function);
    cr_assert(strstr(line, named) != NULL, "'%s' does not name %s", line, function);
    free(line);
}

/* The file:line of ADDRESS through backtrace_resolve (libdw), or NULL. */
static const char *resolved_file(void *address, unsigned *line)
{
    static char file[512];
    struct backtrace_frame *frames;
    void *buffer[1] = { (char *)address + 2 };
    int count = backtrace_resolve(buffer, 1, BACKTRACE_FIRST_IS_PC, &frames);
    cr_assert_geq(count, 1);
    const struct backtrace_frame *physical = &frames[count - 1];
    const char *found = NULL;
    if (physical->file != NULL) {
        snprintf(file, sizeof file, "%s", physical->file);
        *line = physical->line;
        found = file;
    }
    free(frames);
    return found;
}

/* The line the AS-safe index gives (backtrace_print_fd's "at file:line"). */
static void print_one(int fd, void *context)
{
    void *buffer[1] = { (char *)context + 2 };
    backtrace_print_fd(buffer, 1, BACKTRACE_FIRST_IS_PC, fd);
}

static void assert_index_has_line(void *address)
{
    char *text = capture_output(print_one, address);
    cr_assert(strstr(text, "fixture_lib.c:") != NULL, "no fixture_lib.c:LINE in '%s'", text);
    free(text);
}

static void assert_resolves_to_source(void *address)
{
    unsigned line = 0;
    const char *file = resolved_file(address, &line);
    cr_assert_not_null(file, "no source file from libdw");
    cr_assert(strstr(file, "fixture_lib.c") != NULL, "%s", file);
    cr_assert_gt(line, 0u);
}

Test(elf_forms, gcc_compressed_debug_sections_give_names_and_lines)
{
    build_fixture("-gz=zlib");
    SHELL_OK("readelf -S lib.so | grep -A1 debug_line | grep -q C");
    struct loaded loaded = load("lib.so");
    assert_named(loaded.helper, "fixture_static_helper");
    assert_index_has_line(loaded.helper);
    assert_resolves_to_source(loaded.helper);
}

Test(elf_forms, old_zdebug_sections_give_names_and_lines)
{
    build_fixture("");
    SHELL_OK("objcopy --compress-debug-sections=zlib-gnu lib.so && readelf -S lib.so | "
             "grep -q zdebug_line");
    struct loaded loaded = load("lib.so");
    assert_named(loaded.helper, "fixture_static_helper");
    assert_index_has_line(loaded.helper);
    assert_resolves_to_source(loaded.helper);
}

/* libelf before 0.189 cannot inflate zstd: the symbol table (never
 * compressed) still names the function, the lines may be missing. */
Test(elf_forms, zstd_debug_sections_keep_names)
{
    build_fixture("");
    if (shell("objcopy --compress-debug-sections=zstd lib.so 2>/dev/null") != 0)
        cr_skip_test("this objcopy has no zstd");
    struct loaded loaded = load("lib.so");
    assert_named(loaded.helper, "fixture_static_helper");
    unsigned line = 0;
    const char *file = resolved_file(loaded.helper, &line);
    cr_assert(file == NULL || strstr(file, "fixture_lib.c") != NULL, "%s", file);
}

static void debug_root_here(void)
{
    char root[512];
    snprintf(root, sizeof root, "%s/debug", work);
    setenv("EXECINFO_EX_DEBUG_ROOT", root, 1);
}

Test(elf_forms, stripped_with_compressed_debug_file_by_build_id)
{
    build_fixture("");
    SHELL_OK("id=$(readelf -n lib.so | sed -n 's/.*Build ID: //p') && test -n \"$id\" && "
             "mkdir -p debug/.build-id/$(echo $id | cut -c1-2) && "
             "objcopy --only-keep-debug --compress-debug-sections=zlib lib.so "
             "debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
             "strip --strip-all lib.so");
    debug_root_here();
    struct loaded loaded = load("lib.so");
    assert_named(loaded.helper, "fixture_static_helper");
    assert_index_has_line(loaded.helper);
    assert_resolves_to_source(loaded.helper);
}

Test(elf_forms, stripped_with_debuglink)
{
    build_fixture("");
    SHELL_OK("objcopy --only-keep-debug lib.so lib.so.debug && strip --strip-all "
             "--remove-section=.note.gnu.build-id lib.so && "
             "objcopy --add-gnu-debuglink=lib.so.debug lib.so");
    struct loaded loaded = load("lib.so");
    assert_named(loaded.helper, "fixture_static_helper");
    assert_index_has_line(loaded.helper);
}

/* Stripped without a debug file: the static function has no name left;
 * the exported one keeps its .dynsym name. */
Test(elf_forms, stripped_alone_names_exports_and_falls_back_for_the_rest)
{
    build_fixture("");
    SHELL_OK("strip --strip-all lib.so");
    debug_root_here(); /* empty: no debug file anywhere */
    struct loaded loaded = load("lib.so");
    assert_named(loaded.exported, "fixture_function");
    char *line = symbol_line(loaded.helper);
    cr_assert(strstr(line, "fixture_static_helper") == NULL);
    cr_assert(strstr(line, "lib.so(") != NULL, "%s", line);
    free(line);
}

/* sstrip-style: only program headers, which is all the loader needs. The
 * exported function is named from the dynamic segment (DT_SYMTAB, with
 * the count from DT_GNU_HASH or DT_HASH), as glibc's dladdr names it; the
 * static one falls back. */
static void check_without_section_headers(const char *hash_style)
{
    char flags[64], bare[32];
    snprintf(flags, sizeof flags, "-Wl,--hash-style=%s", hash_style);
    snprintf(bare, sizeof bare, "bare-%s.so", hash_style);
    build_fixture(flags);
    SHELL_OK("python3 %s/tests/fuzz/no_section_headers.py lib.so %s", source_root, bare);
    struct loaded loaded = load(bare);
    char module[600];
    snprintf(module, sizeof module, "%s/%s", work, bare);
    assert_named(loaded.exported, "fixture_function");
    assert_named_or_fallback(&loaded, loaded.helper, "fixture_static_helper", module);
}

Test(elf_forms, no_section_headers_names_exports_from_the_dynamic_segment)
{
    debug_root_here();
    check_without_section_headers("gnu");
    check_without_section_headers("sysv");
}

/* The file is cut to one page after dlopen. Its code and data beyond that
 * page are then SIGBUS to touch (ld.so's exit would), so the check runs in
 * a child that leaves by _exit; the index is rebuilt from what is left. */
Test(elf_forms, truncated_after_load_falls_back_cleanly)
{
    build_fixture("");
    SHELL_OK("cp '%s' trigger.so", getenv("FIXTURE_LIB"));
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        struct loaded loaded = load("lib.so");
        char module[600], trigger[600];
        snprintf(module, sizeof module, "%s/lib.so", work);
        snprintf(trigger, sizeof trigger, "%s/trigger.so", work);
        if (truncate(module, 4096) != 0 || dlopen(trigger, RTLD_NOW) == NULL ||
            backtrace_refresh_index() != 0)
            _exit(2);
        int good = line_is_named_or_fallback(&loaded, loaded.helper, "fixture_static_helper", module) &&
                   line_is_named_or_fallback(&loaded, loaded.exported, "fixture_function", module);
        _exit(good ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
}

/* A different library renamed over the loaded one (what a package upgrade
 * does): its symbols are at other offsets, and must not be used. */
static const char other_source[] =
    "int replaced_first(int x) { return x + 1; }\n"
    "int replaced_second(int x) { return x * 7; }\n"
    "int replaced_third(int x) { return x - 3; }\n"
    "int replaced_fourth(int x) { return x ^ 5; }\n";

Test(elf_forms, replaced_on_disk_is_not_read)
{
    build_fixture("");
    char path[512];
    snprintf(path, sizeof path, "%s/other.c", work);
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    fputs(other_source, out);
    fclose(out);
    struct loaded loaded = load("lib.so");
    SHELL_OK("cc -O1 -g -fPIC -shared other.c -o other.so && mv other.so lib.so");
    rebuild_index();
    char module[600];
    snprintf(module, sizeof module, "%s/lib.so", work);
    assert_named_or_fallback(&loaded, loaded.helper, "fixture_static_helper", module);
    assert_named_or_fallback(&loaded, loaded.exported, "fixture_function", module);
}

/* Deleted, and another file put at its path: /proc/self/maps then says
 * "(deleted)". */
Test(elf_forms, deleted_while_loaded_falls_back_cleanly)
{
    build_fixture("");
    struct loaded loaded = load("lib.so");
    SHELL_OK("rm lib.so && cp /bin/true lib.so");
    rebuild_index();
    char *line = symbol_line(loaded.helper);
    cr_assert(strstr(line, "fixture_static_helper") == NULL || strstr(line, "(fixture_static_helper+0x") != NULL,
              "%s", line);
    cr_assert(strstr(line, "lib.so") != NULL, "%s", line);
    free(line);
}
