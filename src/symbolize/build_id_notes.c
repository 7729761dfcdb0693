/* build_id_notes.c: a build-id from a note area in memory (module_list.h).
 * World: signal-safe (pure): the crash handler's own module list reads
 * the notes of the modules the loader lists (index_at_crash.c). */
#define _GNU_SOURCE
#include "module_list.h"

#include <elf.h>
#include <link.h>
#include <string.h>

unsigned build_id_from_notes(const unsigned char *notes, size_t size,
                             unsigned char id[MODULE_BUILD_ID_MAX])
{
    size_t at = 0;

    while (at + sizeof(ElfW(Nhdr)) <= size) {
        ElfW(Nhdr) header;
        memcpy(&header, notes + at, sizeof header);
        size_t name_at = at + sizeof header;
        size_t desc_at = name_at + ((header.n_namesz + 3u) & ~3u);
        size_t next = desc_at + ((header.n_descsz + 3u) & ~3u);
        if (desc_at > size || header.n_descsz > size - desc_at || next < at)
            return 0;
        if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
            memcmp(notes + name_at, "GNU", 4) == 0 && header.n_descsz > 0 &&
            header.n_descsz <= MODULE_BUILD_ID_MAX) {
            memcpy(id, notes + desc_at, header.n_descsz);
            return header.n_descsz;
        }
        at = next;
    }
    return 0;
}
