/* internal_index_cache.c: the persistent index cache (src/symbolize/
 * index_cache.c). A second process reads what the first stored; damaged,
 * stale and hostile files are refused and built again; the directory must
 * be ours; crash reports name the same frames with and without it. No
 * timing is asserted: the counters say what happened. */
#include "support.h"
#include "symbolize/index_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

struct probe {
    int enabled;
    unsigned long long loaded, missed, refused, stored, store_failed;
    size_t modules, symbols, lines;
};

static const char *tests_dir(void)
{
    const char *dir = getenv("EXECINFO_EX_TESTS");
    return dir != NULL ? dir : "build/tests";
}

static char options_entry[512];
static rlim_t file_size_limit = RLIM_INFINITY;

static void set_options(void *context)
{
    putenv(options_entry);
    struct rlimit limit = { file_size_limit, file_size_limit };
    if (file_size_limit != RLIM_INFINITY)
        setrlimit(RLIMIT_FSIZE, &limit);
    (void)context;
}

/* Run cache_probe with EXECINFO_EX_OPTIONS=OPTIONS. */
static struct probe run_probe(const char *options)
{
    static struct child_result result;
    char program[512];
    snprintf(program, sizeof program, "%s/cache_probe", tests_dir());
    snprintf(options_entry, sizeof options_entry, "EXECINFO_EX_OPTIONS=%s", options);
    char *argv[] = { program, NULL };
    run_program(program, argv, set_options, NULL, &result);
    assert_exited_with(&result, 0);
    struct probe probe;
    cr_assert_eq(sscanf(result.output,
                        "enabled=%d loaded=%llu missed=%llu refused=%llu stored=%llu "
                        "store_failed=%llu modules=%zu symbols=%zu lines=%zu",
                        &probe.enabled, &probe.loaded, &probe.missed, &probe.refused,
                        &probe.stored, &probe.store_failed, &probe.modules, &probe.symbols,
                        &probe.lines),
                 9, "%s", result.output);
    return probe;
}

static char made_directories[4][64];
static int made_count;

static void remove_made_directories(void)
{
    for (int i = 0; i < made_count; i++) {
        char command[1024];
        snprintf(command, sizeof command, "chattr -i %s 2>/dev/null; rm -rf %s %s-link",
                 made_directories[i], made_directories[i], made_directories[i]);
        if (system(command) != 0)
            continue;
    }
}

/* A fresh private directory under /tmp, removed when the test's process
 * exits. */
static void fresh_directory(char *path, size_t size)
{
    snprintf(path, size, "/tmp/execinfo_ex_cache_test-XXXXXX");
    cr_assert_not_null(mkdtemp(path));
    if (made_count == 0)
        atexit(remove_made_directories);
    if (made_count < 4)
        snprintf(made_directories[made_count++], sizeof made_directories[0], "%s", path);
}

static void cache_option(char *options, size_t size, const char *directory, const char *more)
{
    snprintf(options, size, "index_cache=%s%s%s", directory, more[0] ? ":" : "", more);
}

/* The names of the .idx files of DIRECTORY, at most CAPACITY. */
static int cache_files(const char *directory, char names[][320], int capacity)
{
    DIR *listing = opendir(directory);
    cr_assert_not_null(listing);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL && count < capacity) {
        size_t length = strlen(entry->d_name);
        if (length > 4 && strcmp(entry->d_name + length - 4, ".idx") == 0)
            snprintf(names[count++], 320, "%s/%s", directory, entry->d_name);
    }
    closedir(listing);
    return count;
}

static unsigned char *read_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "%s", path);
    struct stat status;
    cr_assert_eq(fstat(fd, &status), 0);
    /* 8-aligned, as the loader's memory is */
    unsigned char *bytes = aligned_alloc(16, ((size_t)status.st_size + 16) & ~(size_t)15);
    cr_assert_not_null(bytes);
    cr_assert_eq(read(fd, bytes, (size_t)status.st_size), status.st_size);
    close(fd);
    *size = (size_t)status.st_size;
    return bytes;
}

static void write_file(const char *path, const unsigned char *bytes, size_t size)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(write(fd, bytes, size), (ssize_t)size);
    close(fd);
}

Test(index_cache, a_second_process_reads_what_the_first_stored)
{
    char directory[64], options[256];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");
    struct probe first = run_probe(options);
    cr_assert_eq(first.enabled, 1);
    cr_assert_eq(first.loaded, 0);
    cr_assert_gt(first.stored, 2, "stored %llu", first.stored);
    cr_assert_eq(first.store_failed, 0);
    char names[64][320];
    cr_assert_eq((unsigned long long)cache_files(directory, names, 64), first.stored);

    struct probe second = run_probe(options);
    cr_assert_eq(second.loaded, first.stored, "loaded %llu of %llu", second.loaded, first.stored);
    cr_assert_eq(second.missed, 0);
    cr_assert_eq(second.refused, 0);
    cr_assert_eq(second.stored, 0);
    cr_assert_eq(second.symbols, first.symbols);
    cr_assert_eq(second.lines, first.lines);
    cr_assert_gt(second.lines, 0, "lines=main: the probe's own lines come from the cache");

    /* Without the cache, the same index. */
    struct probe off = run_probe("index_cache=0");
    cr_assert_eq(off.enabled, 0);
    cr_assert_eq(off.loaded + off.stored, 0);
    cr_assert_eq(off.symbols, first.symbols);
    cr_assert_eq(off.lines, first.lines);

    /* Other options shape other files: lines=none is a second set. */
    cache_option(options, sizeof options, directory, "lines=none");
    struct probe without_lines = run_probe(options);
    cr_assert_gt(without_lines.stored, 0);
    cr_assert_eq(without_lines.lines, 0);
    cr_assert_eq(without_lines.symbols, first.symbols);
}

/* Each damage, applied to every file of a filled directory: the next
 * process refuses those files, builds the same index and stores it again. */
enum damage { TRUNCATED, BYTE_FLIPPED, BAD_OFFSET, BAD_DEMANGLED_OFFSET, OLD_FORMAT, SYMLINK,
              WRITABLE_BY_OTHERS, OTHER_OWNER, SECOND_LINK, EMPTY, DAMAGES };

/* The first symbol's offset at FIELD set out of bounds, with a checksum
 * that matches: only the bounds check can refuse it. */
static void offset_out_of_bounds(unsigned char *bytes, size_t size, size_t field)
{
    size_t at = index_cache_header_bytes() + field;
    if (size >= at + 4) {
        uint32_t name = 0xfffffff0u;
        memcpy(bytes + at, &name, sizeof name);
    }
    uint64_t checksum = index_cache_image_checksum(bytes, size);
    memcpy(bytes + INDEX_CACHE_CHECKSUM_AT, &checksum, sizeof checksum);
    cr_assert_eq(index_cache_image_valid(bytes, size), 0);
}

static void apply(enum damage damage, const char *path, const char *directory, int serial)
{
    size_t size;
    unsigned char *bytes = read_file(path, &size);
    char other[512];
    switch (damage) {
    case TRUNCATED:
        cr_assert_eq(truncate(path, (off_t)size / 2), 0);
        break;
    case BYTE_FLIPPED:
        bytes[size - 1 - (size_t)serial % (size / 2)] ^= 0x40;
        write_file(path, bytes, size);
        break;
    case BAD_OFFSET:
        offset_out_of_bounds(bytes, size, offsetof(struct index_symbol, name));
        write_file(path, bytes, size);
        break;
    case OLD_FORMAT: {
        /* format 1 (before demangled names), its checksum right: a file an
         * older build wrote */
        uint32_t format = 1;
        memcpy(bytes + 8, &format, sizeof format);
        uint64_t checksum = index_cache_image_checksum(bytes, size);
        memcpy(bytes + INDEX_CACHE_CHECKSUM_AT, &checksum, sizeof checksum);
        cr_assert_eq(index_cache_image_valid(bytes, size), 0);
        write_file(path, bytes, size);
        break;
    }
    case BAD_DEMANGLED_OFFSET:
        offset_out_of_bounds(bytes, size, offsetof(struct index_symbol, demangled));
        write_file(path, bytes, size);
        break;
    case SYMLINK:
        snprintf(other, sizeof other, "%s/target-%d", directory, serial);
        write_file(other, bytes, size);
        cr_assert_eq(unlink(path), 0);
        cr_assert_eq(symlink(other, path), 0);
        break;
    case WRITABLE_BY_OTHERS:
        cr_assert_eq(chmod(path, 0622), 0);
        break;
    case OTHER_OWNER:
        if (geteuid() != 0)
            cr_skip_test("chown needs root");
        cr_assert_eq(chown(path, geteuid() + 4242, (gid_t)-1), 0);
        break;
    case SECOND_LINK:
        snprintf(other, sizeof other, "%s/link-%d", directory, serial);
        cr_assert_eq(link(path, other), 0);
        break;
    case EMPTY:
        cr_assert_eq(truncate(path, 0), 0);
        break;
    default:
        break;
    }
    free(bytes);
}

static void damaged_files_are_refused(enum damage damage)
{
    char directory[64], options[256], names[64][320];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");
    struct probe clean = run_probe(options);
    int count = cache_files(directory, names, 64);
    cr_assert_gt(count, 2);
    for (int i = 0; i < count; i++)
        apply(damage, names[i], directory, i);
    struct probe damaged = run_probe(options);
    cr_assert_eq(damaged.loaded, 0, "damage %d: %llu damaged files used", damage, damaged.loaded);
    cr_assert_eq(damaged.refused, (unsigned long long)count, "damage %d: refused %llu of %d",
                 damage, damaged.refused, count);
    cr_assert_eq(damaged.stored, (unsigned long long)count);
    cr_assert_eq(damaged.symbols, clean.symbols);
    cr_assert_eq(damaged.lines, clean.lines);
    /* and the files stored again are good */
    struct probe again = run_probe(options);
    cr_assert_eq(again.loaded, (unsigned long long)count);
    cr_assert_eq(again.refused, 0);
}

Test(index_cache, a_truncated_file_is_refused) { damaged_files_are_refused(TRUNCATED); }
Test(index_cache, a_changed_byte_is_refused) { damaged_files_are_refused(BYTE_FLIPPED); }
Test(index_cache, an_offset_out_of_bounds_is_refused) { damaged_files_are_refused(BAD_OFFSET); }
Test(index_cache, a_file_of_the_format_before_demangling_is_refused)
{
    damaged_files_are_refused(OLD_FORMAT);
}
Test(index_cache, a_demangled_offset_out_of_bounds_is_refused)
{
    damaged_files_are_refused(BAD_DEMANGLED_OFFSET);
}
Test(index_cache, a_symlink_is_refused) { damaged_files_are_refused(SYMLINK); }
Test(index_cache, a_file_others_may_write_is_refused) { damaged_files_are_refused(WRITABLE_BY_OTHERS); }
Test(index_cache, a_file_of_another_owner_is_refused) { damaged_files_are_refused(OTHER_OWNER); }
Test(index_cache, a_file_with_a_second_link_is_refused) { damaged_files_are_refused(SECOND_LINK); }
Test(index_cache, an_empty_file_is_refused) { damaged_files_are_refused(EMPTY); }

/* Data built with demangle=1 is not used with demangle=0, nor the other
 * way: each is built and stored under its own name. */
Test(index_cache, the_demangle_option_is_part_of_the_key)
{
    char directory[64], on[256], off[256];
    fresh_directory(directory, sizeof directory);
    cache_option(on, sizeof on, directory, "lines=none");
    cache_option(off, sizeof off, directory, "lines=none:demangle=0");
    struct probe first = run_probe(on);
    cr_assert_gt(first.stored, 0);
    struct probe other = run_probe(off);
    cr_assert_eq(other.loaded, 0);
    cr_assert_eq(other.stored, first.stored);
    cr_assert_eq(other.symbols, first.symbols);
    cr_assert_eq(run_probe(off).loaded, first.stored);
    cr_assert_eq(run_probe(on).loaded, first.stored);
}

/* The validator alone, on one real file: every single-byte change is
 * refused (the checksum), and random changes with the checksum made to
 * match never pass with an offset out of bounds. */
Test(index_cache, the_validator_refuses_changes)
{
    char directory[64], options[256], names[64][320];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "lines=none");
    run_probe(options);
    int count = cache_files(directory, names, 64);
    cr_assert_gt(count, 0);
    /* the smallest file: a full single-byte sweep stays short */
    size_t size = 0, smallest = SIZE_MAX;
    unsigned char *image = NULL;
    for (int i = 0; i < count; i++) {
        size_t this_size;
        unsigned char *bytes = read_file(names[i], &this_size);
        if (this_size < smallest) {
            free(image);
            image = bytes;
            smallest = size = this_size;
        } else {
            free(bytes);
        }
    }
    cr_assert_eq(index_cache_image_valid(image, size), 1);
    for (size_t at = 0; at < size; at++) {
        image[at] ^= 0x01;
        cr_assert_eq(index_cache_image_valid(image, size), 0, "byte %zu", at);
        image[at] ^= 0x01;
    }
    for (size_t cut = 0; cut < size; cut += 1 + cut / 8)
        cr_assert_eq(index_cache_image_valid(image, cut), 0, "cut at %zu", cut);
    unsigned char *copy = aligned_alloc(16, (size + 16) & ~(size_t)15);
    unsigned seed = 14;
    for (int round = 0; round < 20000; round++) {
        memcpy(copy, image, size);
        for (int changes = 1 + rand_r(&seed) % 4; changes > 0; changes--)
            copy[(size_t)rand_r(&seed) % size] = (unsigned char)rand_r(&seed);
        uint64_t checksum = index_cache_image_checksum(copy, size);
        memcpy(copy + INDEX_CACHE_CHECKSUM_AT, &checksum, sizeof checksum);
        if (!index_cache_image_valid(copy, size))
            continue;
        /* accepted: then everything it points at is inside */
        struct index_cache_arrays arrays;
        index_cache_image_arrays(copy, &arrays);
        for (size_t i = 0; i < arrays.symbol_count; i++) {
            cr_assert_lt(arrays.symbols[i].name, arrays.strings_bytes);
            cr_assert_lt(arrays.symbols[i].demangled, arrays.strings_bytes);
        }
    }
    free(copy);
    free(image);
}

Test(index_cache, the_directory_must_be_ours)
{
    char directory[64], options[256], target[128];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");

    cr_assert_eq(chmod(directory, 0755), 0);
    struct probe open_to_others = run_probe(options);
    cr_assert_eq(open_to_others.enabled, 0);
    cr_assert_eq(open_to_others.stored, 0);

    cr_assert_eq(chmod(directory, 0700), 0);
    snprintf(target, sizeof target, "%s-link", directory);
    cr_assert_eq(symlink(directory, target), 0);
    cache_option(options, sizeof options, target, "");
    cr_assert_eq(run_probe(options).enabled, 0, "a symlink to the directory");

    if (geteuid() == 0) {
        cr_assert_eq(chown(directory, 4242, (gid_t)-1), 0);
        cache_option(options, sizeof options, directory, "");
        struct probe foreign = run_probe(options);
        cr_assert_eq(foreign.enabled, 0, "a directory of another user");
        cr_assert_eq(chown(directory, 0, (gid_t)-1), 0);
    }

    /* A directory that does not exist is made, 0700. */
    char made[128];
    snprintf(made, sizeof made, "%s/new", directory);
    cache_option(options, sizeof options, made, "");
    struct probe fresh = run_probe(options);
    cr_assert_eq(fresh.enabled, 1);
    struct stat status;
    cr_assert_eq(stat(made, &status), 0);
    cr_assert_eq(status.st_mode & 0777, 0700);
    cr_assert_gt(fresh.stored, 0);
}

/* ---- a warm load maps no file; the first use maps and checks (issue 26) ---- */

struct first_use {
    int mapped_at_load, mapped_after;
    unsigned long long refused;
    char frame[512];
};

/* Run cache_first_use on DIRECTORY (its cache) in MODE. */
static struct first_use run_first_use(const char *directory, const char *mode)
{
    static struct child_result result;
    char program[512], options[256];
    struct first_use out;
    snprintf(program, sizeof program, "%s/cache_first_use", tests_dir());
    cache_option(options, sizeof options, directory, "");
    snprintf(options_entry, sizeof options_entry, "EXECINFO_EX_OPTIONS=%s", options);
    char *argv[] = { program, (char *)directory, (char *)mode, NULL };
    run_program(program, argv, set_options, NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert_eq(sscanf(result.output, "mapped_at_load=%d mapped_after=%d refused=%llu frame=%511s",
                        &out.mapped_at_load, &out.mapped_after, &out.refused, out.frame),
                 4, "%s", result.output);
    return out;
}

Test(index_cache, a_warm_load_maps_no_file_until_the_first_use)
{
    char directory[64];
    fresh_directory(directory, sizeof directory);
    struct first_use cold = run_first_use(directory, "keep");
    cr_assert(strstr(cold.frame, "(first_use_probe+0x0)") != NULL, "%s", cold.frame);
    struct first_use warm = run_first_use(directory, "keep");
    cr_assert_eq(warm.mapped_at_load, 0, "no cache file mapped before main");
    cr_assert_gt(warm.mapped_after, 0, "the program's file mapped by its first lookup");
    cr_assert_eq(warm.refused, 0);
    cr_assert_str_eq(warm.frame, cold.frame);
}

/* Every file written again between the load and the first use: the
 * first use refuses them (their mtime is not the one checked at load);
 * nothing hangs, and the frame is named from the module's own .symtab
 * (cold_frame_names.c), as a module the index did not read. */
Test(index_cache, a_file_written_after_the_load_is_refused_at_the_first_use)
{
    char directory[64];
    fresh_directory(directory, sizeof directory);
    struct first_use cold = run_first_use(directory, "keep");
    cr_assert(strstr(cold.frame, "(first_use_probe+0x0)") != NULL, "%s", cold.frame);
    struct first_use rewritten = run_first_use(directory, "rewrite");
    cr_assert_eq(rewritten.mapped_at_load, 0);
    cr_assert_eq(rewritten.mapped_after, 0, "a refused file is unmapped");
    cr_assert_gt(rewritten.refused, 0);
    cr_assert(strstr(rewritten.frame, "cache_first_use(first_use_probe+0x0)") != NULL, "%s",
              rewritten.frame);
    /* The next load checks the rewritten files whole, finds them sound,
     * and names the frame again. */
    struct first_use after = run_first_use(directory, "keep");
    cr_assert_str_eq(after.frame, cold.frame);
}

/* PATH last read USED seconds ago and written WRITTEN seconds ago, the
 * nanoseconds kept (the mtime's are the writer's stamp). */
static void age(const char *path, time_t used, time_t written)
{
    struct stat status;
    cr_assert_eq(stat(path, &status), 0, "%s", path);
    time_t now = time(NULL);
    struct timespec times[2] = { { now - used, status.st_atim.tv_nsec },
                                 { now - written, status.st_mtim.tv_nsec } };
    cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0, "%s", path);
}

/* The trim (past the size cap) removes the least recently used files
 * first. A warm load reads nothing of a file and marks it used itself:
 * files written an hour ago and loaded now are kept, and one used half
 * an hour ago goes. Before, the files every process loaded were the
 * first to go, between a process's load and its first use (issue 27:
 * frames without names on a machine whose cache was at its cap). */
Test(index_cache, the_files_a_warm_load_used_outlive_the_trim)
{
    char directory[64], stale[128], options[256];
    fresh_directory(directory, sizeof directory);
    run_first_use(directory, "keep");
    char names[64][320];
    int count = cache_files(directory, names, 64);
    cr_assert_gt(count, 0);
    /* Read since their writing, as the kernel's relatime leaves them: a
     * read moves the atime again only a day later. */
    for (int i = 0; i < count; i++)
        age(names[i], 3600, 7200);
    /* Past the cap: 70 MB, sparse (no disk), used half an hour ago. */
    snprintf(stale, sizeof stale, "%s/stale.idx", directory);
    int fd = open(stale, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)70 << 20), 0);
    close(fd);
    age(stale, 1800, 1800);
    /* A warm load with no first use: no file read (the kernel would
     * move the atime of a file whose ctime is newer: the ages above). */
    static struct child_result loaded;
    char program[512];
    snprintf(program, sizeof program, "%s/cache_first_use", tests_dir());
    cache_option(options, sizeof options, directory, "");
    snprintf(options_entry, sizeof options_entry, "EXECINFO_EX_OPTIONS=%s", options);
    char *argv[] = { program, directory, "load", NULL };
    run_program(program, argv, set_options, NULL, &loaded);
    assert_exited_with(&loaded, 0);
    cr_assert(strstr(loaded.output, "mapped_at_load=0\n") != NULL, "%s", loaded.output);
    /* Another program's first run stores its file, and trims. */
    cr_assert_gt(run_probe(options).stored, 0);
    cr_assert_neq(access(stale, F_OK), 0, "the trim ran: the least recently used file is gone");
    for (int i = 0; i < count; i++)
        cr_assert_eq(access(names[i], F_OK), 0, "%s was trimmed, used a moment ago", names[i]);
}

/* Every offset of every file of DIRECTORY out of bounds and every name
 * byte a control character, the checksum left wrong, and the mtime put
 * back as it was: a file damaged under an unchanged stamp, which the
 * first use does not check whole (index_cache_deferred.c). */
static void damage_under_the_stamp(const char *directory)
{
    char names[64][320];
    int count = cache_files(directory, names, 64);
    cr_assert_gt(count, 0);
    for (int i = 0; i < count; i++) {
        struct stat before;
        size_t size;
        cr_assert_eq(stat(names[i], &before), 0);
        unsigned char *bytes = read_file(names[i], &size);
        struct index_cache_arrays arrays;
        index_cache_image_arrays(bytes, &arrays);
        struct index_symbol *symbols = (struct index_symbol *)arrays.symbols;
        for (size_t s = 0; s < arrays.symbol_count; s++)
            symbols[s].name = symbols[s].demangled = 0xfffffff0u;
        struct index_line *lines = (struct index_line *)arrays.lines;
        for (size_t l = 0; l < arrays.line_count; l++)
            lines[l].file = 0xfffffff0u;
        struct index_inline *inlines = (struct index_inline *)arrays.inlines;
        for (size_t c = 0; c < arrays.inline_count; c++)
            inlines[c].parent = (uint32_t)c;
        if (arrays.strings_bytes > 1)
            memset((char *)arrays.strings, 1, arrays.strings_bytes - 1);
        FILE *file = fopen(names[i], "r+b");
        cr_assert_not_null(file);
        cr_assert_eq(fwrite(bytes, 1, size, file), size);
        cr_assert_eq(fclose(file), 0);
        free(bytes);
        struct timespec times[2] = { before.st_atim, before.st_mtim };
        cr_assert_eq(utimensat(AT_FDCWD, names[i], times, 0), 0);
    }
}

/* The readers check each offset they follow: no fault, no name. */
Test(index_cache, a_file_damaged_under_its_stamp_gives_no_name_and_no_fault)
{
    char directory[64];
    fresh_directory(directory, sizeof directory);
    struct first_use cold = run_first_use(directory, "keep");
    cr_assert(strstr(cold.frame, "(first_use_probe+0x0)") != NULL, "%s", cold.frame);
    damage_under_the_stamp(directory);
    struct first_use damaged = run_first_use(directory, "keep");
    cr_assert_eq(damaged.mapped_at_load, 0, "stamped: not checked at load");
    cr_assert_gt(damaged.mapped_after, 0);
    cr_assert(strstr(damaged.frame, "cache_first_use(+0x") != NULL, "%s", damaged.frame);
}

/* ---- crash reports, with and without the cache ---- */

static char crash_options[512], crash_library[600], crash_preload[600];
/* The debug roots of the next crash: "NAME=VALUE", or an unused name. */
static char crash_debug_root[600] = "EXECINFO_EX_TEST_UNUSED_A=";
static char crash_system_root[600] = "EXECINFO_EX_TEST_UNUSED_B=";
static char crash_fixture[512]; /* the fixture library, if not the built one */

static void prepare_crash(void *context)
{
    (void)context;
    personality(ADDR_NO_RANDOMIZE); /* the same addresses in every run */
    putenv(crash_options);
    putenv(crash_library);
    putenv(crash_preload);
    putenv(crash_debug_root);
    putenv(crash_system_root);
}

/* Runtime addresses (0x and 9 or more digits) as "ADDRESS": where a
 * dlopen'd module lands depends on the mappings made before it, which
 * the cache changes (one mapping for the data read, not one a module).
 * Offsets inside functions and modules are kept. */
static void without_addresses(char *text)
{
    char *to = text;
    for (const char *at = text; *at != '\0';) {
        size_t digits = 0;
        if (at[0] == '0' && at[1] == 'x')
            while ((at[2 + digits] >= '0' && at[2 + digits] <= '9') ||
                   (at[2 + digits] >= 'a' && at[2 + digits] <= 'f'))
                digits++;
        if (digits >= 9) {
            memcpy(to, "ADDRESS", 7);
            to += 7;
            at += 2 + digits;
        } else {
            *to++ = *at++;
        }
    }
    *to = '\0';
}

/* The frame and module lines of a crash of dlopen_crash (fixture_lib.so,
 * the program, libc), under the preloaded core library. */
static void crash_frames(const char *options, char *out, size_t size)
{
    static struct child_result result;
    char program[512];
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY (make test sets it)");
    snprintf(program, sizeof program, "%s/dlopen_crash", tests_dir());
    snprintf(crash_options, sizeof crash_options, "EXECINFO_EX_OPTIONS=handler=1:%s", options);
    if (crash_fixture[0] != '\0')
        snprintf(crash_library, sizeof crash_library, "FIXTURE_LIB=%s", crash_fixture);
    else
        snprintf(crash_library, sizeof crash_library, "FIXTURE_LIB=%s/fixture_lib.so", tests_dir());
    snprintf(crash_preload, sizeof crash_preload, "LD_PRELOAD=%s", library);
    char *argv[] = { program, NULL };
    run_program(program, argv, prepare_crash, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    size_t used = 0;
    out[0] = '\0';
    for (char *line = strtok(result.output, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if ((line[0] == '#' || strncmp(line, "  0x", 4) == 0) && used + strlen(line) + 2 < size)
            used += (size_t)snprintf(out + used, size - used, "%s\n", line);
    without_addresses(out);
}

static void same_frames(const char *more)
{
    char directory[64], options[256];
    static char without[1 << 14], cold[1 << 14], warm[1 << 14];
    fresh_directory(directory, sizeof directory);
    snprintf(options, sizeof options, "index_cache=0%s%s", more[0] ? ":" : "", more);
    crash_frames(options, without, sizeof without);
    cache_option(options, sizeof options, directory, more);
    crash_frames(options, cold, sizeof cold);
    crash_frames(options, warm, sizeof warm);
    cr_assert(strstr(without, "fixture_crash_inner") != NULL, "%s", without);
    cr_assert(strstr(without, "__libc_start_call_main") != NULL, "%s", without);
    cr_assert_str_eq(cold, without);
    cr_assert_str_eq(warm, without);
    char names[64][320];
    cr_assert_gt(cache_files(directory, names, 64), 2, "the warm run had files to read");
}

Test(index_cache, a_crash_names_the_same_frames_with_and_without_it) { same_frames(""); }

/* ---- crashes before main's body, and a damaged file at the crash (issue 26) ---- */

/* The frame lines of a crash of early_crash under the preloaded core
 * library: MODE "constructor" faults in its constructor, "main" at main's
 * first instruction. */
static void early_frames(const char *mode, const char *options, char *out, size_t size)
{
    static struct child_result result;
    char program[512];
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY (make test sets it)");
    snprintf(program, sizeof program, "%s/early_crash", tests_dir());
    snprintf(crash_options, sizeof crash_options, "EXECINFO_EX_OPTIONS=handler=1:%s", options);
    snprintf(crash_library, sizeof crash_library, "EARLY_CRASH=%s", mode);
    snprintf(crash_preload, sizeof crash_preload, "LD_PRELOAD=%s", library);
    char *argv[] = { program, NULL };
    run_program(program, argv, prepare_crash, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "*** end of report") != NULL, "%s", result.output);
    size_t used = 0;
    out[0] = '\0';
    for (char *line = strtok(result.output, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (line[0] == '#' && used + strlen(line) + 2 < size)
            used += (size_t)snprintf(out + used, size - used, "%s\n", line);
    without_addresses(out);
}

/* Without the cache, cold and warm: the same frames, with EXPECTED (a
 * name and its file:line) in each. */
static void early_crash_named(const char *mode, const char *expected_first,
                              const char *expected_line)
{
    char directory[64], options[256];
    static char without[1 << 14], cold[1 << 14], warm[1 << 14];
    fresh_directory(directory, sizeof directory);
    early_frames(mode, "index_cache=0", without, sizeof without);
    cache_option(options, sizeof options, directory, "");
    early_frames(mode, options, cold, sizeof cold);
    early_frames(mode, options, warm, sizeof warm);
    cr_assert(strstr(without, expected_first) != NULL, "%s", without);
    cr_assert(strstr(without, expected_line) != NULL, "%s", without);
    cr_assert_str_eq(cold, without);
    cr_assert_str_eq(warm, without);
}

Test(index_cache, a_crash_in_a_constructor_is_named, .timeout = 60)
{
    early_crash_named("constructor", "#0  ", "early_constructor_fault+0");
    early_crash_named("constructor", "early_constructor+", "early_crash.c:");
}

Test(index_cache, a_crash_at_the_first_instruction_of_main_is_named, .timeout = 60)
{
    early_crash_named("main", "(main+0)", "__libc_start_call_main");
}

/* Every file of a warm directory damaged (a byte flipped, or cut in
 * half): the crash still names what it named without the cache (the
 * files are refused and the index built again at load), and nothing
 * hangs (the test's timeout). */
static void damaged_at_the_crash(enum damage damage)
{
    char directory[64], options[256], names[64][320];
    static char without[1 << 14], damaged[1 << 14];
    fresh_directory(directory, sizeof directory);
    crash_frames("index_cache=0", without, sizeof without);
    cache_option(options, sizeof options, directory, "");
    crash_frames(options, damaged, sizeof damaged);
    int count = cache_files(directory, names, 64);
    cr_assert_gt(count, 2);
    for (int i = 0; i < count; i++)
        apply(damage, names[i], directory, i);
    crash_frames(options, damaged, sizeof damaged);
    cr_assert(strstr(without, "fixture_crash_inner") != NULL, "%s", without);
    cr_assert_str_eq(damaged, without);
}

Test(index_cache, a_crash_with_changed_bytes_in_every_file, .timeout = 60)
{
    damaged_at_the_crash(BYTE_FLIPPED);
}

Test(index_cache, a_crash_with_every_file_truncated, .timeout = 60)
{
    damaged_at_the_crash(TRUNCATED);
}

/* A crash over files damaged under their stamps: the report is whole,
 * the damaged modules' frames as path(+offset), nothing faults or hangs
 * (the test's timeout). */
Test(index_cache, a_crash_with_every_file_damaged_under_its_stamp, .timeout = 60)
{
    char directory[64], options[256];
    static char frames[1 << 14];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");
    crash_frames(options, frames, sizeof frames);
    cr_assert(strstr(frames, "fixture_crash_inner") != NULL, "%s", frames);
    damage_under_the_stamp(directory);
    crash_frames(options, frames, sizeof frames);
    cr_assert(strstr(frames, "#0 ") != NULL || strstr(frames, "#0") != NULL, "%s", frames);
    cr_assert(strstr(frames, "fixture_crash_inner") == NULL, "%s", frames);
    cr_assert(strstr(frames, "fixture_lib.so(+0x") != NULL, "%s", frames);
}

/* lines=own, the default: a dlopen'd module built with -g gets its lines
 * (lines=main leaves them out), from its own line table only: its
 * stripped copy with a debug file under a root gets names, not lines. */
Test(index_cache, a_module_built_with_debug_info_gets_lines_by_default, .timeout = 60)
{
    static char frames[1 << 14];
    crash_frames("index_cache=0", frames, sizeof frames);
    cr_assert(strstr(frames, "(fixture_crash_inner+") != NULL, "%s", frames);
    cr_assert(strstr(frames, "fixture_lib.c:") != NULL, "no line of the plugin:\n%s", frames);
    crash_frames("index_cache=0:lines=main", frames, sizeof frames);
    cr_assert(strstr(frames, "fixture_lib.c:") == NULL, "lines=main:\n%s", frames);
}

/* A stripped copy of the fixture library in DIRECTORY, its debug file
 * under DIRECTORY/root/.build-id/, an empty DIRECTORY/empty. */
static void stripped_fixture(const char *directory)
{
    char command[2048];
    snprintf(command, sizeof command,
             "set -e; cd '%s'; lib='%s/fixture_lib.so'; mkdir empty;"
             " id=$(readelf -n \"$lib\" | awk '/Build ID/ { print $3 }'); test -n \"$id\";"
             " rest=${id#??}; mkdir -p root/.build-id/${id%%\"$rest\"};"
             " objcopy --only-keep-debug \"$lib\" root/.build-id/${id%%\"$rest\"}/$rest.debug;"
             " strip --strip-all -o fixture_lib.so \"$lib\"",
             directory, tests_dir());
    cr_assert_eq(system(command), 0, "%s", command);
}

/* The debug roots are part of the key: a root given after a crash was
 * reported without it is searched, not answered from the copy made
 * without it; and a user's root adds to the system's, it does not hide
 * it. */
Test(index_cache, a_debug_root_given_later_is_searched, .timeout = 60)
{
    char directory[64], work[64], options[256];
    static char frames[1 << 14];
    fresh_directory(directory, sizeof directory);
    fresh_directory(work, sizeof work);
    stripped_fixture(work);
    snprintf(crash_fixture, sizeof crash_fixture, "%s/fixture_lib.so", work);
    cache_option(options, sizeof options, directory, "lines=all");

    snprintf(crash_system_root, sizeof crash_system_root, "EXECINFO_EX_SYSTEM_DEBUG_ROOT=%s/empty", work);
    crash_frames(options, frames, sizeof frames);
    cr_assert(strstr(frames, "fixture_crash_inner") == NULL, "stripped, no debug file:\n%s", frames);

    snprintf(crash_debug_root, sizeof crash_debug_root, "EXECINFO_EX_DEBUG_ROOT=%s/root", work);
    crash_frames(options, frames, sizeof frames);
    cr_assert(strstr(frames, "fixture_crash_inner") != NULL, "the new root, then:\n%s", frames);

    snprintf(crash_debug_root, sizeof crash_debug_root, "EXECINFO_EX_DEBUG_ROOT=%s/empty", work);
    snprintf(crash_system_root, sizeof crash_system_root, "EXECINFO_EX_SYSTEM_DEBUG_ROOT=%s/root", work);
    crash_frames(options, frames, sizeof frames);
    cr_assert(strstr(frames, "fixture_crash_inner") != NULL, "a user's root hid the system's:\n%s",
              frames);
    crash_fixture[0] = '\0';
    snprintf(crash_debug_root, sizeof crash_debug_root, "EXECINFO_EX_TEST_UNUSED_A=");
    snprintf(crash_system_root, sizeof crash_system_root, "EXECINFO_EX_TEST_UNUSED_B=");
}
Test(index_cache, with_every_line_table_too) { same_frames("lines=all"); }

/* ---- the shared library, preloaded: no ELF file read, libdw not loaded ---- */

static char debug_options[512], debug_preload[600];

static void prepare_loader_debug(void *context)
{
    (void)context;
    putenv(debug_options);
    putenv(debug_preload);
    putenv("LD_DEBUG=files"); /* the loader names every object it loads */
}

static void run_true_preloaded(const char *directory, struct child_result *result)
{
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    cr_assert_not_null(library, "EXECINFO_EX_LIBRARY (make test sets it)");
    snprintf(debug_options, sizeof debug_options, "EXECINFO_EX_OPTIONS=handler=1:index_cache=%s",
             directory);
    snprintf(debug_preload, sizeof debug_preload, "LD_PRELOAD=%s", library);
    char *argv[] = { "/bin/true", NULL };
    run_program("/bin/true", argv, prepare_loader_debug, NULL, result);
    assert_exited_with(result, 0);
}

/* Issue 26 (wt-cold): a preloaded library reads no module at load,
 * cold or warm; the cache is filled by the second stage of a crash (the
 * crash's modules, libc among them), which a later process finds. */
Test(index_cache, a_preloaded_process_does_not_load_libdw_cold_or_warm, .timeout = 60)
{
    static struct child_result cold, warm;
    static char frames[1 << 14];
    char directory[64], options[256];
    fresh_directory(directory, sizeof directory);
    run_true_preloaded(directory, &cold);
    cr_assert(strstr(cold.output, "libexecinfo_ex.so.0") != NULL, "%s", cold.output);
    cr_assert(strstr(cold.output, "file=libdw.so.1") == NULL, "cold: libdw loaded:\n%s",
              cold.output);
    cr_assert(strstr(cold.output, "file=libelf.so.1") == NULL, "cold: libelf loaded:\n%s",
              cold.output);
    char names[64][320];
    cr_assert_eq(cache_files(directory, names, 64), 0, "nothing read, nothing stored");
    cache_option(options, sizeof options, directory, "");
    crash_frames(options, frames, sizeof frames);
    cr_assert_gt(cache_files(directory, names, 64), 2, "the crash's second stage stored");
    run_true_preloaded(directory, &warm);
    cr_assert(strstr(warm.output, "file=libdw.so.1") == NULL, "warm: libdw loaded:\n%s",
              warm.output);
    cr_assert(strstr(warm.output, "file=libelf.so.1") == NULL, "warm: libelf loaded:\n%s",
              warm.output);
}

/* A directory nothing can be written to (immutable: root too) and a file
 * size limit: the program runs as without the cache, stores nothing, and
 * is not killed by SIGXFSZ. */
Test(index_cache, a_directory_that_cannot_be_written)
{
    char directory[64], options[256], command[160];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");
    snprintf(command, sizeof command, "chattr +i %s 2>/dev/null", directory);
    if (system(command) != 0)
        cr_skip_test("chattr +i is not available here");
    struct probe read_only = run_probe(options);
    snprintf(command, sizeof command, "chattr -i %s", directory);
    cr_assert_eq(system(command), 0);
    cr_assert_eq(read_only.enabled, 1);
    cr_assert_eq(read_only.stored, 0);
    cr_assert_eq(read_only.store_failed, 1, "the first failure stops the stores");
    struct probe off = run_probe("index_cache=0");
    cr_assert_eq(read_only.symbols, off.symbols);
    cr_assert_eq(read_only.lines, off.lines);
}

Test(index_cache, a_file_size_limit)
{
    char directory[64], options[256];
    fresh_directory(directory, sizeof directory);
    cache_option(options, sizeof options, directory, "");
    file_size_limit = 4096;
    struct probe limited = run_probe(options); /* exits 0: not SIGXFSZ */
    file_size_limit = RLIM_INFINITY;
    cr_assert_gt(limited.store_failed, 0, "libc's file is larger than the limit");
    struct probe off = run_probe("index_cache=0");
    cr_assert_eq(limited.symbols, off.symbols);
}

/* ---- inlined calls (issue 15) ---- */

/* IMAGE (aligned, SIZE bytes) with its checksum made to match again. */
static int valid_after_change(unsigned char *image, size_t size)
{
    uint64_t checksum = index_cache_image_checksum(image, size);
    memcpy(image + INDEX_CACHE_CHECKSUM_AT, &checksum, sizeof checksum);
    return index_cache_image_valid(image, size);
}

/* The file inline_program (a crash two inlined calls deep) left in
 * DIRECTORY: the one with inlined calls. */
static unsigned char *inline_image(const char *directory, size_t *size)
{
    char program[512], options[256], names[64][320];
    static struct child_result result;
    snprintf(program, sizeof program, "%s/inline_program", tests_dir());
    cache_option(options, sizeof options, directory, "");
    snprintf(options_entry, sizeof options_entry, "EXECINFO_EX_OPTIONS=%s", options);
    char *argv[] = { program, "crash", NULL };
    run_program(program, argv, set_options, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    int count = cache_files(directory, names, 64);
    for (int i = 0; i < count; i++) {
        size_t bytes;
        unsigned char *file = read_file(names[i], &bytes);
        unsigned char *image = aligned_alloc(16, (bytes + 16) & ~(size_t)15);
        memcpy(image, file, bytes);
        free(file);
        struct index_cache_arrays arrays;
        cr_assert_eq(index_cache_image_valid(image, bytes), 1, "%s", names[i]);
        index_cache_image_arrays(image, &arrays);
        if (arrays.inline_count > 0) {
            *size = bytes;
            return image;
        }
        free(image);
    }
    cr_assert_fail("no cache file with inlined calls in %s:\n%s", directory, result.output);
    return NULL;
}

/* A chain that would not end, a call or a name out of bounds, ranges out
 * of order: each refused, even with a checksum that matches. */
Test(index_cache, damaged_inline_arrays_are_refused, .timeout = 30)
{
    char directory[64];
    size_t size;
    fresh_directory(directory, sizeof directory);
    unsigned char *image = inline_image(directory, &size);
    unsigned char *copy = aligned_alloc(16, (size + 16) & ~(size_t)15);
    struct index_cache_arrays arrays;
    index_cache_image_arrays(image, &arrays);
    cr_assert_gt(arrays.inline_range_count, 1);
    size_t calls_at = (size_t)((const unsigned char *)arrays.inlines - image);
    size_t ranges_at = (size_t)((const unsigned char *)arrays.inline_ranges - image);
    size_t last = arrays.inline_count - 1;
    struct {
        size_t at;
        uint32_t value;
    } changes[] = {
        /* the last call its own parent: a walk up would never end */
        { calls_at + last * sizeof(struct index_inline) + offsetof(struct index_inline, parent),
          (uint32_t)last },
        { calls_at + offsetof(struct index_inline, name), (uint32_t)arrays.strings_bytes },
        { calls_at + offsetof(struct index_inline, call_file), 0xfffffff0u },
        { ranges_at + offsetof(struct index_inline_range, call), (uint32_t)arrays.inline_count },
        /* the second range before the first */
        { ranges_at + sizeof(struct index_inline_range) + offsetof(struct index_inline_range, from),
          0 },
    };
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        memcpy(copy, image, size);
        cr_assert_eq(valid_after_change(copy, size), 1);
        memcpy(copy + changes[i].at, &changes[i].value, sizeof changes[i].value);
        if (i == 4) /* a 64-bit field: its high half too */
            memset(copy + changes[i].at + 4, 0, 4);
        cr_assert_eq(valid_after_change(copy, size), 0, "change %zu", i);
    }
    free(copy);
    free(image);
}
