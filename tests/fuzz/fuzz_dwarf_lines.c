/* fuzz_dwarf_lines.c: libFuzzer over the DWARF line reader
 * (src/symbolize/line_table.c, on libdw): any bytes, as an ELF image in
 * memory, give rows sorted one per address, a budget refusal or nothing,
 * never a crash. The seeds are objects with only their debug sections
 * (DWARF 4, DWARF 5, compressed), so that most mutations land in the
 * line programs (tests/fuzz/fuzz.mk). */
#include "symbolize/line_table.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_rows(const struct line_vector *lines)
{
    for (size_t i = 0; i < lines->count; i++) {
        if (lines->entries[i].file >= lines->file_count && lines->entries[i].line != 0)
            abort();
        if (i > 0 && lines->entries[i - 1].address >= lines->entries[i].address)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        elf_version(EV_CURRENT);
        ready = 1;
    }
    /* libelf may write into a memory image (elf_memory takes char *). */
    char *image = malloc(size ? size : 1);
    if (image == NULL)
        return 0;
    memcpy(image, data, size);
    Elf *elf = elf_memory(image, size);
    if (elf != NULL) {
        struct line_vector lines;
        memset(&lines, 0, sizeof lines);
        long rows = line_table_read(elf, 1 << 18, &lines);
        if (rows < 0 && rows != -E2BIG && rows != -ENOMEM)
            abort();
        line_table_finish(&lines);
        check_rows(&lines);
        (void)line_table_packed_size(&lines);
        line_vector_free(&lines);
        elf_end(elf);
    }
    free(image);
    return 0;
}
