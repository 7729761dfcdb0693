/* fuzz_elf_index.c: libFuzzer over the symbol index builder
 * (src/symbolize/module_data.c with symbol_table.c and line_table.c, on
 * libelf and libdw): any bytes, as an ELF image in memory (the way the
 * vdso is read), give symbols and lines or a refusal, never a crash. The
 * seeds are small real ELF files (tests/fuzz/fuzz.mk). */
#include "symbolize/lookup.h"
#include "symbolize/module_data.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct module_info module;
    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = (char *)"fuzz";
    module.end = UINTPTR_MAX;
    module.memory_image = data;
    module.memory_size = size;
    size_t line_bytes;
    const struct module_data *built = module_data_build(&module, 1 << 20, &line_bytes);
    if (built == NULL)
        return 0;
    /* Every symbol and line can be looked up. */
    size_t bytes = sizeof(struct index_snapshot) + sizeof(struct index_module);
    static unsigned char storage[sizeof(struct index_snapshot) + sizeof(struct index_module) + 64];
    struct index_snapshot *snapshot = (struct index_snapshot *)storage;
    memset(storage, 0, bytes);
    snapshot->count = 1;
    snapshot->modules[0] = (struct index_module){ .bias = 0, .start = 0, .end = UINTPTR_MAX,
                                                  .path = "fuzz", .data = built };
    struct frame_location location;
    for (size_t i = 0; i < built->symbol_count && i < 64; i++)
        lookup_frame(snapshot, built->symbols[i].start + 1, built->symbols[i].start, 1, &location);
    munmap((void *)built, built->mapped_bytes);
    return 0;
}
