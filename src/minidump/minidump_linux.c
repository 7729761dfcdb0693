/* minidump_linux.c: Breakpad's Linux streams: files of /proc copied as
 * they are, and the dynamic linker's list of loaded objects (r_debug and
 * its link_map chain, found through the program's dynamic section),
 * read without faulting.
 * World: signal-safe (open, read, process_vm_readv). */
#include "minidump_streams.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#define LINK_MAPS_MAX 4096   /* a longer chain is taken for a loop */
#define NAME_BYTES 256
#define DYNAMIC_MAX 1024     /* entries */

int minidump_linux_file(struct minidump_state *state, uint32_t type, const char *path,
                        struct md_raw_directory *entry)
{
    int result = minidump_file_append_path(&state->file, path, &entry->location);
    if (result == 0)
        entry->stream_type = type;
    return result;
}

/* AT_PHDR and AT_PHNUM from /proc/self/auxv (getauxval is libc's). */
static int read_program_headers_location(uintptr_t *phdr, size_t *phnum)
{
    Elf64_auxv_t vector[64];
    *phdr = 0;
    *phnum = 0;
    int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t got = read(fd, vector, sizeof vector);
    close(fd);
    for (ssize_t i = 0; got > 0 && i < got / (ssize_t)sizeof vector[0]; i++) {
        if (vector[i].a_type == AT_PHDR)
            *phdr = vector[i].a_un.a_val;
        else if (vector[i].a_type == AT_PHNUM)
            *phnum = vector[i].a_un.a_val;
    }
    return *phdr != 0 && *phnum != 0 ? 0 : -ENOENT;
}

/* The program's dynamic section, in memory. */
static int find_dynamic(uintptr_t *dynamic)
{
    uintptr_t phdr;
    size_t phnum;
    int result = read_program_headers_location(&phdr, &phnum);
    if (result < 0)
        return result;
    /* The load bias: exact from PT_PHDR; else, as Breakpad assumes, the
     * page of the headers less the first segment's address. */
    uintptr_t bias = phdr & ~(uintptr_t)0xfff, dynamic_address = 0;
    int have_phdr = 0;
    for (size_t i = 0; i < phnum; i++) {
        Elf64_Phdr header;
        if (minidump_read_memory(&header, phdr + i * sizeof header, sizeof header) < 0)
            return -EFAULT;
        if (header.p_type == PT_PHDR) {
            bias = phdr - header.p_vaddr;
            have_phdr = 1;
        } else if (header.p_type == PT_LOAD && header.p_offset == 0 && !have_phdr) {
            bias -= header.p_vaddr;
        } else if (header.p_type == PT_DYNAMIC) {
            dynamic_address = header.p_vaddr;
        }
    }
    if (dynamic_address == 0)
        return -ENOENT; /* a static program */
    *dynamic = bias + dynamic_address;
    return 0;
}

/* The dynamic section's length up to DT_NULL included, and DT_DEBUG. */
static int scan_dynamic(uintptr_t dynamic, size_t *length, uintptr_t *debug)
{
    *debug = 0;
    for (size_t i = 0; i < DYNAMIC_MAX; i++) {
        Elf64_Dyn entry;
        if (minidump_read_memory(&entry, dynamic + i * sizeof entry, sizeof entry) < 0)
            return -EFAULT;
        if (entry.d_tag == DT_DEBUG)
            *debug = entry.d_un.d_ptr;
        if (entry.d_tag == DT_NULL) {
            *length = (i + 1) * sizeof entry;
            return *debug != 0 ? 0 : -ENOENT;
        }
    }
    return -E2BIG;
}

/* A C string of the process, at most NAME_BYTES - 1 bytes, read page by
 * page so that one ending near an unmapped page is still read. */
static size_t read_name(uintptr_t address, char name[NAME_BYTES])
{
    size_t used = 0;
    while (address != 0 && used < NAME_BYTES - 1) {
        size_t piece = 4096 - ((address + used) & 4095);
        if (piece > NAME_BYTES - 1 - used)
            piece = NAME_BYTES - 1 - used;
        if (minidump_read_memory(name + used, address + used, piece) < 0)
            break;
        size_t end = strnlen(name + used, piece);
        used += end;
        if (end < piece)
            break;
    }
    name[used] = '\0';
    return used;
}

static int count_link_maps(const struct r_debug *debug)
{
    int count = 0;
    for (uintptr_t at = (uintptr_t)debug->r_map; at != 0 && count < LINK_MAPS_MAX; count++) {
        struct link_map map;
        if (minidump_read_memory(&map, at, sizeof map) < 0)
            return -EFAULT;
        at = (uintptr_t)map.l_next;
    }
    return count;
}

static int write_link_maps(struct minidump_state *state, const struct r_debug *debug, int count,
                           uint32_t *rva)
{
    int result = minidump_file_take(&state->file, (size_t)count * sizeof(struct md_raw_link_map64), rva);
    uintptr_t at = (uintptr_t)debug->r_map;
    for (int i = 0; result == 0 && i < count && at != 0; i++) {
        struct link_map map;
        char name[NAME_BYTES];
        struct md_location where;
        if (minidump_read_memory(&map, at, sizeof map) < 0)
            return -EFAULT;
        at = (uintptr_t)map.l_next;
        result = minidump_file_append_string(&state->file, name,
                                             read_name((uintptr_t)map.l_name, name), &where);
        struct md_raw_link_map64 entry;
        memset(&entry, 0, sizeof entry);
        entry.addr = map.l_addr;
        entry.name = where.rva;
        entry.ld = (uintptr_t)map.l_ld;
        if (result == 0)
            result = minidump_file_write(&state->file, *rva + (uint32_t)(i * sizeof entry), &entry,
                                         sizeof entry);
    }
    return result;
}

/* MD_LINUX_DSO_DEBUG, as Breakpad writes it: MDRawDebug64, then the
 * program's dynamic section. */
int minidump_dso_debug(struct minidump_state *state, struct md_raw_directory *entry)
{
    uintptr_t dynamic, debug_address;
    size_t dynamic_length;
    struct r_debug debug;
    int result = find_dynamic(&dynamic);
    if (result == 0)
        result = scan_dynamic(dynamic, &dynamic_length, &debug_address);
    if (result == 0)
        result = minidump_read_memory(&debug, debug_address, sizeof debug);
    int count = result == 0 ? count_link_maps(&debug) : 0;
    if (result < 0 || count < 0)
        return result < 0 ? result : count;
    uint32_t map_rva = 0, rva;
    if (count > 0 && (result = write_link_maps(state, &debug, count, &map_rva)) < 0)
        return result;
    if (dynamic_length > state->file.scratch_size ||
        minidump_read_memory(state->file.scratch, dynamic, dynamic_length) < 0)
        return -EFAULT;
    struct md_raw_debug64 raw;
    memset(&raw, 0, sizeof raw);
    raw.version = (uint32_t)debug.r_version;
    raw.map = map_rva;
    raw.dso_count = (uint32_t)count;
    raw.brk = debug.r_brk;
    raw.ldbase = debug.r_ldbase;
    raw.dynamic = dynamic;
    result = minidump_file_take(&state->file, sizeof raw + dynamic_length, &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &raw, sizeof raw);
    if (result == 0)
        result = minidump_file_write(&state->file, rva + (uint32_t)sizeof raw, state->file.scratch,
                                     dynamic_length);
    if (result < 0)
        return result;
    entry->stream_type = MD_LINUX_DSO_DEBUG;
    entry->location = (struct md_location){ (uint32_t)(sizeof raw + dynamic_length), rva };
    return 0;
}
