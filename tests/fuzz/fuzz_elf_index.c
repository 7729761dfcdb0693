/* fuzz_elf_index.c: libFuzzer over the symbol index builder
 * (src/symbolize/module_data.c with symbol_table.c, dynamic_symbols.c,
 * line_table.c and debug_file.c, on libelf and libdw): any bytes give
 * symbols and lines or a refusal, never a crash. Each input is read as an
 * ELF image in memory (the way the vdso is read), then as a module file,
 * the way every other module is read: elf_file_open, libelf reading with
 * pread (ELF_C_READ), the build-id check against the loaded module's, and
 * the debug file found by build-id or by .gnu_debuglink; three times, the
 * loaded module's build-id being the file's own, none, or another.
 * Every symbol's demangled name (made with libiberty, src/symbolize/
 * demangle.c) must lie in the strings and within DEMANGLE_OUTPUT_MAX; the
 * input's first bytes are also given to the demangler as a name, after
 * "_Z" and after "_R".
 * The seeds are small real ELF files (tests/fuzz/fuzz.mk), C++ names and
 * hostile mangled ones among them (tests/fuzz/hostile_mangled.py).
 *
 * The file is written to module.so in a fresh directory in /dev/shm (a
 * file system in memory: on ext4 the writes cost 20 times the build),
 * beside links to the debug files of $FUZZ_ELF_FILES (fuzz.mk puts the
 * seeds' there: by debuglink, and by build-id with EXECINFO_EX_DEBUG_ROOT
 * pointing there); the directory is removed at exit (a crash leaves it:
 * libFuzzer ends those with _Exit). */
#define _GNU_SOURCE
#include "symbolize/debug_file.h"
#include "symbolize/demangle.h"
#include "symbolize/lookup.h"
#include "symbolize/module_data.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char directory[64];
static char module_path[sizeof directory + 16];

static void remove_directory(void)
{
    DIR *listing = opendir(directory);
    struct dirent *entry;
    while (listing != NULL && (entry = readdir(listing)) != NULL)
        if (entry->d_name[0] != '.')
            unlinkat(dirfd(listing), entry->d_name, 0);
    if (listing != NULL)
        closedir(listing);
    rmdir(directory);
}

/* Links in DIRECTORY to the debug files (*.debug) in FROM. */
static void link_debug_files(const char *from)
{
    DIR *listing = opendir(from);
    struct dirent *entry;
    char target[4096], link[sizeof directory + 256];
    while (listing != NULL && (entry = readdir(listing)) != NULL) {
        size_t length = strlen(entry->d_name);
        if (length < 7 || strcmp(entry->d_name + length - 6, ".debug") != 0)
            continue;
        if (snprintf(target, sizeof target, "%s/%s", from, entry->d_name) < (int)sizeof target &&
            snprintf(link, sizeof link, "%s/%s", directory, entry->d_name) < (int)sizeof link &&
            symlink(target, link) != 0)
            abort();
    }
    if (listing != NULL)
        closedir(listing);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    elf_version(EV_CURRENT);
    strcpy(directory, "/dev/shm/fuzz_elf_index_XXXXXX");
    if (mkdtemp(directory) == NULL) {
        strcpy(directory, "/tmp/fuzz_elf_index_XXXXXX");
        if (mkdtemp(directory) == NULL)
            abort();
    }
    atexit(remove_directory);
    snprintf(module_path, sizeof module_path, "%s/module.so", directory);
    const char *debug_files = getenv("FUZZ_ELF_FILES");
    if (debug_files != NULL && *debug_files != '\0') {
        link_debug_files(debug_files);
        if (getenv("EXECINFO_EX_DEBUG_ROOT") == NULL)
            setenv("EXECINFO_EX_DEBUG_ROOT", debug_files, 1);
    } else {
        setenv("EXECINFO_EX_DEBUG_ROOT", directory, 1);
    }
    return 0;
}

/* Every symbol of BUILT can be looked up. */
static void look_up_all(const struct module_data *built)
{
    static unsigned char storage[sizeof(struct index_snapshot) + sizeof(struct index_module) + 64];
    struct index_snapshot *snapshot = (struct index_snapshot *)storage;
    memset(storage, 0, sizeof storage);
    snapshot->count = 1;
    snapshot->modules[0] = (struct index_module){ .bias = 0, .start = 0, .end = UINTPTR_MAX,
                                                  .path = "fuzz", .data = built };
    struct frame_location location;
    for (size_t i = 0; i < built->symbol_count && i < 64; i++)
        lookup_frame(snapshot, built->symbols[i].start + 1, built->symbols[i].start, 1, &location);
}

/* Each symbol's readable name is a string of the module's, bounded. */
static void check_demangled(const struct module_data *built)
{
    for (size_t i = 0; i < built->symbol_count; i++) {
        const struct index_symbol *symbol = &built->symbols[i];
        if (symbol->demangled >= built->name_bytes ||
            strnlen(built->strings + symbol->demangled, DEMANGLE_OUTPUT_MAX + 1) > DEMANGLE_OUTPUT_MAX)
            abort();
    }
}

/* DATA's first bytes as a mangled name, after PREFIX. */
static void demangle_bytes(const char *prefix, const uint8_t *data, size_t size)
{
    static char name[DEMANGLE_INPUT_MAX + 64], out[DEMANGLE_OUTPUT_MAX + 1];
    size_t length = size < sizeof name - 3 ? size : sizeof name - 3;
    memcpy(name, prefix, 2);
    memcpy(name + 2, data, length);
    name[2 + length] = '\0';
    size_t written = demangle_name(name, out);
    if (written > DEMANGLE_OUTPUT_MAX || (written > 0 && strlen(out) != written))
        abort();
}

static void build_and_check(const struct module_info *module)
{
    size_t line_bytes;
    const struct module_data *built = module_data_build(module, 1 << 20, &line_bytes);
    if (built == NULL)
        return;
    look_up_all(built);
    check_demangled(built);
    munmap((void *)built, built->mapped_bytes);
}

static void write_module_file(const uint8_t *data, size_t size)
{
    int fd = open(module_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    for (size_t done = 0; done < size;) {
        ssize_t wrote = write(fd, data + done, size - done);
        if (wrote <= 0)
            abort();
        done += (size_t)wrote;
    }
    close(fd);
}

/* The build-id the loader would report for the module: the file's own
 * (read from the image, as the loader reads its PT_NOTE), none (only the
 * debuglink can find a debug file), or a wrong one (the file was replaced
 * on disk since it was loaded: refused). */
enum loaded_id { OWN_ID, NO_ID, WRONG_ID };

static unsigned loaded_build_id(const uint8_t *data, size_t size, enum loaded_id kind,
                                unsigned char *id)
{
    unsigned length = 0;
    Elf *elf = elf_memory((char *)data, size);
    if (elf != NULL) {
        length = elf_file_build_id(elf, id, MODULE_BUILD_ID_MAX);
        elf_end(elf);
    }
    if (kind == NO_ID)
        return 0;
    if (kind == WRONG_ID) {
        if (length == 0) {
            memset(id, 0xab, 20);
            return 20;
        }
        id[length - 1] ^= 0xff;
    }
    return length;
}

static void build_from_file(const uint8_t *data, size_t size, enum loaded_id kind)
{
    struct module_info module;

    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = module_path;
    module.end = UINTPTR_MAX;
    module.build_id_length = loaded_build_id(data, size, kind, module.build_id);
    build_and_check(&module);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct module_info module;

    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = (char *)"fuzz";
    module.end = UINTPTR_MAX;
    module.memory_image = data;
    module.memory_size = size;
    build_and_check(&module);

    write_module_file(data, size);
    build_from_file(data, size, OWN_ID);
    build_from_file(data, size, NO_ID);
    build_from_file(data, size, WRONG_ID);
    demangle_bytes("_Z", data, size);
    demangle_bytes("_R", data, size);
    return 0;
}
