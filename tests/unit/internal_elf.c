/* The symbol index builder over the ELF files users ship and the ones that
 * are broken: stripped with a debug file (by build-id, by debuglink),
 * truncated, mutated, replaced. Each gives the right names or none, never
 * a crash. The files are made here, from tests/fixtures/fixture_lib.c. */
#define _GNU_SOURCE
#include "symbolize/index.h"
#include "symbolize/lookup.h"
#include "symbolize/line_table.h"
#include "symbolize/module_data.h"
#include "support.h"

#include <dlfcn.h>
#include <gelf.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

static char work[256];

static void run(const char *command)
{
    char line[2048];
    snprintf(line, sizeof line, "cd %s && %s", work, command);
    cr_assert_eq(system(line), 0, "%s", line);
}

static void make_work_dir(void)
{
    snprintf(work, sizeof work, "/tmp/execinfo_ex_elf_%d", (int)getpid());
    mkdir(work, 0700);
    char copy[512];
    snprintf(copy, sizeof copy, "cp '%s' lib.so", getenv("FIXTURE_LIB"));
    run(copy);
    elf_version(EV_CURRENT);
}

static void remove_work_dir(void)
{
    char line[300];
    snprintf(line, sizeof line, "rm -rf %s", work);
    system(line);
}

TestSuite(elf, .init = make_work_dir, .fini = remove_work_dir, .timeout = 30);

/* A module as if NAME were loaded at bias 0, with BUILD_ID (NULL: none). */
static struct module_info module_for(const char *name, const unsigned char *build_id,
                                     unsigned build_id_length)
{
    static char path[512];
    struct module_info module;
    memset(&module, 0, sizeof module);
    snprintf(path, sizeof path, "%s/%s", work, name);
    module.file_path = path;
    module.display_path = path;
    module.start = 0;
    module.end = UINTPTR_MAX;
    if (build_id_length)
        memcpy(module.build_id, build_id, build_id_length);
    module.build_id_length = build_id_length;
    return module;
}

static unsigned read_build_id(const char *name, unsigned char *id)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", work, name);
    int fd = open(path, O_RDONLY);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    unsigned char found[64];
    unsigned length = 0;
    Elf_Scn *section = NULL;
    while ((section = elf_nextscn(elf, section)) != NULL) {
        GElf_Shdr header;
        gelf_getshdr(section, &header);
        if (header.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(section, NULL);
        length = build_id_from_notes(data->d_buf, data->d_size, found);
        if (length)
            break;
    }
    memcpy(id, found, length);
    elf_end(elf);
    close(fd);
    return length;
}

/* The name the index gives to link-time address ADDRESS in DATA, as the
 * return address of a call at CALL_ADDRESS. */
static const char *name_of_return(const struct module_data *data, uint64_t address,
                                  uint64_t call_address)
{
    size_t bytes = sizeof(struct index_snapshot) + sizeof(struct index_module);
    struct index_snapshot *snapshot = calloc(1, bytes);
    snapshot->count = 1;
    snapshot->modules[0] = (struct index_module){ .bias = 0, .start = 0, .end = UINTPTR_MAX,
                                                  .path = "m", .data = data };
    static struct frame_location location;
    lookup_frame(snapshot, address, call_address, 0, &location);
    free(snapshot);
    return location.function;
}

/* ... and as an exact address. */
static const char *name_at(const struct module_data *data, uint64_t address)
{
    return name_of_return(data, address, address);
}

static uint64_t symbol_value(const char *name, const char *symbol)
{
    char command[512], output[64] = "";
    snprintf(command, sizeof command, "nm %s/%s | awk '$3 == \"%s\" { print $1 }'", work, name,
             symbol);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    cr_assert_not_null(fgets(output, sizeof output, pipe), "no %s in %s", symbol, name);
    pclose(pipe);
    return strtoull(output, NULL, 16);
}

Test(elf, full_symbol_table_names_static_functions)
{
    unsigned char id[64];
    unsigned length = read_build_id("lib.so", id);
    cr_assert_gt(length, 0u, "the fixture has a build-id");
    struct module_info module = module_for("lib.so", id, length);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
    cr_assert_not_null(data);
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    cr_assert_str_eq(name_at(data, helper + 2), "fixture_static_helper");
    cr_assert_gt(data->line_count, 0u, "the fixture has -g line data");
    /* Just past the function's end: a return address there (after a call
     * to a noreturn function as its last instruction) is named by the
     * call, one byte before, even when the next function starts there. */
    uint64_t end = helper + 1;
    while (name_at(data, end) != NULL && strcmp(name_at(data, end), "fixture_static_helper") == 0)
        end++;
    cr_assert_str_eq(name_of_return(data, end, end - 1), "fixture_static_helper",
                     "named by the call, whatever lies at the return address (%s)",
                     name_at(data, end) != NULL ? name_at(data, end) : "nothing");
}

Test(elf, stripped_module_uses_build_id_debug_file)
{
    unsigned char id[64];
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    unsigned length = read_build_id("lib.so", id);
    char directory[512];
    snprintf(directory, sizeof directory, "mkdir -p debug/.build-id/%02x && objcopy "
             "--only-keep-debug lib.so debug/.build-id/%02x/", id[0], id[0]);
    size_t at = strlen(directory);
    for (unsigned i = 1; i < length; i++)
        at += (size_t)snprintf(directory + at, sizeof directory - at, "%02x", id[i]);
    snprintf(directory + at, sizeof directory - at, ".debug && strip --strip-all lib.so");
    run(directory);
    struct module_info module = module_for("lib.so", id, length);
    size_t line_bytes;

    unsetenv("EXECINFO_EX_DEBUG_ROOT");
    const struct module_data *without = module_data_build(&module, 0, &line_bytes);
    cr_assert_not_null(without);
    cr_assert_null(name_at(without, helper + 2), "stripped: the static name is gone");

    char root[512];
    snprintf(root, sizeof root, "%s/debug", work);
    setenv("EXECINFO_EX_DEBUG_ROOT", root, 1);
    const struct module_data *with = module_data_build(&module, 1 << 20, &line_bytes);
    unsetenv("EXECINFO_EX_DEBUG_ROOT");
    cr_assert_not_null(with);
    cr_assert_str_eq(name_at(with, helper + 2), "fixture_static_helper");
    cr_assert_gt(with->line_count, 0u, "lines from the debug file");
}

Test(elf, stripped_module_uses_debuglink)
{
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    run("objcopy --only-keep-debug lib.so lib.so.dbg && strip --strip-all "
        "--remove-section=.note.gnu.build-id lib.so && "
        "objcopy --add-gnu-debuglink=lib.so.dbg lib.so && mkdir -p .debug && "
        "mv lib.so.dbg .debug/");
    struct module_info module = module_for("lib.so", NULL, 0);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 0, &line_bytes);
    cr_assert_not_null(data);
    cr_assert_str_eq(name_at(data, helper + 2), "fixture_static_helper");
}

Test(elf, replaced_file_is_refused_by_build_id)
{
    unsigned char id[64];
    unsigned length = read_build_id("lib.so", id);
    id[0] ^= 0xff; /* the loaded module's id no longer matches the file's */
    struct module_info module = module_for("lib.so", id, length);
    size_t line_bytes;
    cr_assert_null(module_data_build(&module, 1 << 20, &line_bytes));
}

Test(elf, missing_and_non_elf_files_are_refused)
{
    run("printf 'not an elf file at all' > text.so && : > empty.so");
    const char *names[] = { "missing.so", "text.so", "empty.so" };
    for (int i = 0; i < 3; i++) {
        struct module_info module = module_for(names[i], NULL, 0);
        size_t line_bytes;
        cr_assert_null(module_data_build(&module, 1 << 20, &line_bytes), "%s", names[i]);
    }
}

/* Truncated at every 1/16 of the file: no crash, never a wrong name. */
Test(elf, truncated_files_fall_back_cleanly)
{
    struct stat info;
    char path[512];
    snprintf(path, sizeof path, "%s/lib.so", work);
    cr_assert_eq(stat(path, &info), 0);
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    for (int part = 0; part < 16; part++) {
        char command[256];
        snprintf(command, sizeof command, "head -c %lld lib.so > cut.so",
                 (long long)info.st_size * part / 16);
        run(command);
        struct module_info module = module_for("cut.so", NULL, 0);
        size_t line_bytes;
        const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
        const char *name = data ? name_at(data, helper + 2) : NULL;
        cr_assert(name == NULL || strcmp(name, "fixture_static_helper") == 0, "%s", name);
    }
}

/* A control byte in a symbol name (an escape sequence, a newline that would
 * split a frame's line, DEL) is stored as '?': in the first, the second
 * and the last word of the name (names are copied a word at a time). */
Test(elf, control_bytes_in_names_become_question_marks)
{
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    run("perl -pi -e 's/fixture_static_helper/fixture\\x1bstatic\\nhel\\x7fer/g' lib.so");
    struct module_info module = module_for("lib.so", NULL, 0);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
    cr_assert_not_null(data);
    cr_assert_str_eq(name_at(data, helper + 2), "fixture?static?hel?er");
}

/* A string section without its final NUL (.debug_line_str, which the
 * line table's file names point into): libdw would measure the last name
 * with strlen past the section's buffer (a heap over-read that ASan and
 * fuzz_elf_index report). The module gives its names and no lines. */
Test(elf, a_string_section_without_final_nul_gives_no_lines)
{
    uint64_t helper = symbol_value("lib.so", "fixture_static_helper");
    run("set -- $(readelf -S -W lib.so | sed -n 's/.*\\.debug_line_str *[A-Z]* *[0-9a-f]* \\([0-9a-f]*\\) \\([0-9a-f]*\\).*/\\1 \\2/p') && "
        "test -n \"$2\" && printf A | dd of=lib.so bs=1 seek=$(( 0x$1 + 0x$2 - 1 )) conv=notrunc 2>/dev/null");
    struct module_info module = module_for("lib.so", NULL, 0);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
    cr_assert_not_null(data);
    cr_assert_str_eq(name_at(data, helper + 2), "fixture_static_helper");
    cr_assert_eq(data->line_count, 0u, "lines read from a string section without its end");
}

/* Bytes flipped at pseudo-random places, section headers included. */
Test(elf, mutated_files_never_crash_the_builder)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lib.so", work);
    int fd = open(path, O_RDONLY);
    struct stat info;
    fstat(fd, &info);
    unsigned char *original = malloc((size_t)info.st_size);
    cr_assert_eq(read(fd, original, (size_t)info.st_size), info.st_size);
    close(fd);
    unsigned seed = 12345;
    int built = 0;
    for (int round = 0; round < 300; round++) {
        unsigned char *copy = malloc((size_t)info.st_size);
        memcpy(copy, original, (size_t)info.st_size);
        for (int flips = 0; flips < 8; flips++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % (size_t)info.st_size;
            /* Half the flips land in the ELF and section headers. */
            if (flips % 2 == 0)
                at = (seed >> 8) % 64;
            copy[at] ^= (unsigned char)(seed >> 3);
        }
        char mutated[512];
        snprintf(mutated, sizeof mutated, "%s/mutated.so", work);
        int out = open(mutated, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        cr_assert_eq(write(out, copy, (size_t)info.st_size), info.st_size);
        close(out);
        struct module_info module = module_for("mutated.so", NULL, 0);
        size_t line_bytes;
        const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
        if (data != NULL) {
            built++;
            const char *name = name_at(data, 0x1100);
            /* Whatever the damage, a name is a bounded string with no control
             * byte (a flipped byte in .strtab must not reach a report). */
            for (size_t i = 0; name != NULL && name[i] != '\0'; i++) {
                unsigned char byte = (unsigned char)name[i];
                cr_assert(i < 4096 && byte >= 0x20 && byte != 0x7f,
                          "round %d: byte 0x%02x at %zu of '%s'", round, byte, i, name);
            }
        }
        free(copy);
    }
    free(original);
    cr_assert_lt(built, 300, "some mutations must be refused"); 
}

Test(elf, line_budget_is_respected)
{
    struct module_info module = module_for("lib.so", NULL, 0);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 3 * sizeof(struct line_entry),
                                                       &line_bytes);
    cr_assert_not_null(data);
    cr_assert_leq(data->line_count, 3u);
    cr_assert(data->lines_truncated);
}

/* A hostile file without section headers (tests/fixtures/hostile_dynamic.py):
 * 200000 symbols whose names all start in one 4 MB string table, once with
 * no NUL at all and once with only a final NUL. Reading it must stay
 * linear: it took 9.5 s (no NUL: each name scanned to the table's end)
 * and would have taken hours (final NUL: 800 GB of name bytes) before
 * names were checked against the table's last NUL once and stored cut at
 * 4 KiB within a per-module budget. What is held here is the work the
 * builder says it did on names (module_data.name_bytes_read) and what it
 * stored, not a time: either quadratic form reads count x length bytes,
 * 800 GB, where the bound is the table and twice the names budget. */
#define HOSTILE_SYMBOLS 200000u
#define HOSTILE_TABLE_BYTES 4000000u
#define NAME_STORED_MAX 4096u              /* as src/symbolize/module_data.c */
#define NAMES_BUDGET ((size_t)256 << 20)

/* libelf's elf_strptr, with the bytes it scans counted as elfutils 0.188
 * scans them: none past the first when the table ends in NUL, else from
 * the table's end back to the name (it may find a NUL sooner: at most
 * that). The library's own objects call this one (the test is linked with
 * the static library). */
static uint64_t strptr_bytes;

char *elf_strptr(Elf *elf, size_t section, size_t offset)
{
    static char *(*real)(Elf *, size_t, size_t);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "elf_strptr");
    Elf_Scn *strings = elf_getscn(elf, section);
    Elf_Data *data = strings != NULL ? elf_rawdata(strings, NULL) : NULL;
    if (data != NULL && data->d_buf != NULL && offset < data->d_size)
        strptr_bytes += ((const char *)data->d_buf)[data->d_size - 1] == '\0'
                            ? 1 : data->d_size - offset;
    return real(elf, section, offset);
}

/* The same with section headers (tests/fixtures/hostile_symtab.py): a
 * .symtab of 20000 symbols named in a 4 MB .strtab whose only NUL is its
 * first byte. Asking elf_strptr for each name scanned the table each time
 * (80 GB here, 1 s; 200000 symbols: 11 s); one scan for the last NUL now. */
Test(elf, hostile_symtab_names_are_found_in_one_scan, .timeout = 60)
{
    char command[1200], checkout[512];
    cr_assert_not_null(getcwd(checkout, sizeof checkout));
    snprintf(command, sizeof command,
             "python3 '%s/tests/fixtures/hostile_symtab.py' hostile_symtab.so 20000 %u 0",
             checkout, HOSTILE_TABLE_BYTES);
    run(command);
    struct module_info module = module_for("hostile_symtab.so", NULL, 0);
    size_t line_bytes;
    strptr_bytes = 0;
    const struct module_data *data = module_data_build(&module, 1 << 20, &line_bytes);
    cr_assert_not_null(data);
    cr_assert_eq(data->symbol_count, 0u, "names without a NUL were taken");
    uint64_t scanned = data->name_bytes_read + strptr_bytes;
    cr_assert_leq(scanned, 2 * (uint64_t)HOSTILE_TABLE_BYTES,
                  "%llu bytes scanned for names (%llu by elf_strptr): more than twice the table",
                  (unsigned long long)scanned, (unsigned long long)strptr_bytes);
    munmap((void *)data, data->mapped_bytes);
}

static const struct module_data *build_hostile(int final_nul)
{
    char command[1200], checkout[512];
    cr_assert_not_null(getcwd(checkout, sizeof checkout)); /* make test runs there */
    snprintf(command, sizeof command,
             "python3 '%s/tests/fixtures/hostile_dynamic.py' hostile.so %u %u%s", checkout,
             HOSTILE_SYMBOLS, HOSTILE_TABLE_BYTES,
             final_nul ? " && printf '\\000' | dd of=hostile.so bs=1 seek=$(( $(stat -c %s hostile.so) - 1 )) conv=notrunc 2>/dev/null" : "");
    run(command);
    struct module_info module = module_for("hostile.so", NULL, 0);
    size_t line_bytes;
    return module_data_build(&module, 1 << 20, &line_bytes);
}

Test(elf, hostile_string_table_without_nul_is_read_once, .timeout = 60)
{
    const struct module_data *data = build_hostile(0);
    cr_assert_not_null(data, "a file whose names are unusable still gives (empty) data");
    cr_assert_eq(data->symbol_count, 0u, "names without a NUL were taken");
    cr_assert_eq(data->name_bytes, 0u);
    /* One scan of the table for its last NUL, none per symbol. */
    cr_assert_leq(data->name_bytes_read, (uint64_t)HOSTILE_TABLE_BYTES,
                  "%llu bytes read for names: more than the table's %u",
                  (unsigned long long)data->name_bytes_read, HOSTILE_TABLE_BYTES);
    cr_assert_geq(data->name_bytes_read, (uint64_t)HOSTILE_TABLE_BYTES,
                  "the table was scanned (the counter counts)");
    munmap((void *)data, data->mapped_bytes);
}

Test(elf, hostile_string_table_of_one_long_name_is_bounded, .timeout = 60)
{
    const struct module_data *data = build_hostile(1);
    cr_assert_not_null(data);
    cr_assert_gt(data->symbol_count, 0u);
    cr_assert_lt(data->symbol_count, HOSTILE_SYMBOLS, "the name budget must leave some out");
    for (size_t i = 0; i < data->symbol_count; i++)
        cr_assert_lt(strlen(data->strings + data->symbols[i].name), NAME_STORED_MAX);
    /* Each name cut at 4 KiB, all of them within the budget: stored, and
     * in the mapping. */
    cr_assert_leq(data->name_bytes, NAMES_BUDGET);
    cr_assert_geq(data->name_bytes, data->symbol_count * (size_t)NAME_STORED_MAX);
    cr_assert_leq(data->mapped_bytes, sizeof *data + data->symbol_count * sizeof(struct index_symbol) +
                                          data->line_count * sizeof(struct index_line) +
                                          data->name_bytes);
    /* Read: each kept name three times (measured, then found and copied),
     * one more measured at the budget's end; the table's last NUL at once. */
    uint64_t bound = 3 * (uint64_t)data->name_bytes + NAME_STORED_MAX + 1;
    cr_assert_leq(data->name_bytes_read, bound, "%llu bytes read for names, bound %llu",
                  (unsigned long long)data->name_bytes_read, (unsigned long long)bound);
    munmap((void *)data, data->mapped_bytes);
}
