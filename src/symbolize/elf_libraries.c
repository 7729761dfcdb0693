/* elf_libraries.c: libelf and libdw, loaded when the index first needs
 * them (a module to build, backtrace_resolve), not at every start.
 * World: normal (dlopen, dlsym). In the shared library only: the static
 * library links them as a program would.
 *
 * With the index cache warm a process reads no ELF file at all, and
 * mapping and relocating libdw, libelf, libz, liblzma and libbz2 was half
 * of what loading our library still cost (docs/PERFORMANCE.md). Each
 * function the library calls is a small entry here, of the same name
 * (hidden), that jumps through a table; the table starts at a resolver
 * that loads both libraries once, fills the table and goes on with the
 * call's registers as they were. If either cannot be loaded, every entry
 * returns 0 (NULL): elf_begin, elf_memory, elf_version and dwfl_begin then
 * fail, and no other function is reached. The assembly is one header per
 * architecture (elf_library_entry.h). */
#define _GNU_SOURCE
#include "elf_library_entry.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#define ELF_LIBRARY_FUNCTIONS(X) \
    X(0, elf_begin) X(1, elf_end) X(2, elf_getdata) X(3, elf_getdata_rawchunk) \
    X(4, elf_getphdrnum) X(5, elf_getscn) X(6, elf_getshdrnum) X(7, elf_getshdrstrndx) \
    X(8, elf_kind) X(9, elf_memory) X(10, elf_nextscn) X(11, elf_strptr) X(12, elf_version) \
    X(13, gelf_fsize) X(14, gelf_getdyn) X(15, gelf_getehdr) X(16, gelf_getphdr) \
    X(17, gelf_getshdr) X(18, gelf_getsym) \
    X(19, dwarf_attr) X(20, dwarf_attr_integrate) X(21, dwarf_begin_elf) X(22, dwarf_end) \
    X(23, dwarf_filesrc) X(24, dwarf_formstring) X(25, dwarf_formudata) X(26, dwarf_getscopes) \
    X(27, dwarf_getsrcfiles) X(28, dwarf_getsrclines) X(29, dwarf_lineaddr) \
    X(30, dwarf_lineendsequence) X(31, dwarf_lineno) X(32, dwarf_linesrc) \
    X(33, dwarf_new_oom_handler) X(34, dwarf_nextcu) X(35, dwarf_offdie) \
    X(36, dwarf_onesrcline) X(37, dwarf_tag) \
    X(38, dwfl_addrmodule) X(39, dwfl_begin) X(40, dwfl_end) X(41, dwfl_lineinfo) \
    X(42, dwfl_linux_proc_find_elf) X(43, dwfl_linux_proc_report) X(44, dwfl_module_addrdie) \
    X(45, dwfl_module_getsrc) X(46, dwfl_report_end) X(47, dwfl_standard_find_debuginfo) \
    X(48, dwarf_child) X(49, dwarf_siblingof) X(50, dwarf_ranges) X(51, dwarf_getscopes_die) \
    X(52, dwarf_hasattr) X(53, dwarf_formref_die) X(54, dwarf_dieoffset) \
    X(55, dwarf_getattrs) X(56, dwarf_formaddr) X(57, dwarf_whatattr)
#define ELF_LIBRARY_FUNCTION_COUNT 58

/* The entries (elf_library_entry.h): NAME jumps through its slot; the
 * resolver of slot I passes I to the common resolver. */
ELF_LIBRARY_FUNCTIONS(ELF_LIBRARY_ENTRY)
ELF_LIBRARY_RESOLVER

#define RESOLVER_DECLARATION(index, name) extern char elf_library_resolve_##index[];
ELF_LIBRARY_FUNCTIONS(RESOLVER_DECLARATION)
extern char elf_library_unavailable[];

#define RESOLVER_ADDRESS(index, name) elf_library_resolve_##index,
__attribute__((visibility("hidden"), used))
void *elf_library_slots[ELF_LIBRARY_FUNCTION_COUNT] = { ELF_LIBRARY_FUNCTIONS(RESOLVER_ADDRESS) };

#define NAME(index, name) #name,
static const char *const names[ELF_LIBRARY_FUNCTION_COUNT] = { ELF_LIBRARY_FUNCTIONS(NAME) };

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/* libc's dlopen, not ours (load_watch.c), which would refresh the index
 * from inside its own build; a versioned lookup passes over ours. */
static void *open_library(const char *name)
{
    void *(*libc_dlopen)(const char *, int) =
        (void *(*)(const char *, int))dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.34");
    if (libc_dlopen == NULL)
        libc_dlopen = (void *(*)(const char *, int))dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.2.5");
    return libc_dlopen != NULL ? libc_dlopen(name, RTLD_NOW | RTLD_LOCAL) : NULL;
}

static void load(void)
{
    void *elf = open_library("libelf.so.1");
    void *dw = elf != NULL ? open_library("libdw.so.1") : NULL;
    void *found[ELF_LIBRARY_FUNCTION_COUNT];
    int complete = dw != NULL;
    for (int i = 0; complete && i < ELF_LIBRARY_FUNCTION_COUNT; i++) {
        found[i] = dlsym(names[i][0] == 'd' ? dw : elf, names[i]);
        complete = found[i] != NULL;
    }
    for (int i = 0; i < ELF_LIBRARY_FUNCTION_COUNT; i++)
        __atomic_store_n(&elf_library_slots[i], complete ? found[i] : (void *)elf_library_unavailable,
                         __ATOMIC_RELEASE);
}

__attribute__((visibility("hidden"), used))
void elf_libraries_load(void)
{
    pthread_once(&loaded, load);
}
