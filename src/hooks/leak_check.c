/* leak_check.c: the leak check by reachability, run from normal code:
 * backtrace_heap_leak_check() and, with leak_check=1, at exit.
 * World: normal (dl_iterate_phdr, dlsym, mmap, qsort). The part that
 * runs with the world stopped is leak_scan.c.
 *
 * Everything the scan needs is mapped before the stop. The stop itself
 * happens inside dl_iterate_phdr's callback, holding the loader's lock,
 * as LSan does: no thread is stopped halfway through dlopen or dlclose,
 * so the list of modules, whose writable segments are roots, is the one
 * the stopped threads see. (The stopped threads' own stack walks use the
 * lock-free _dl_find_object, not that lock.) */
#define _GNU_SOURCE
#include "leak.h"
#include "leak_suppress.h"
#include "block_set.h"
#include "heap.h"
#include "heap_report.h"
#include "execinfo_ex.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define READABLE_CAPACITY 65536    /* mappings kept from /proc/self/maps */
#define LOADER_RANGES 8

struct workspace {
    struct leak_scan scan;
    struct leak_range *globals;
    size_t global_capacity;
    struct leak_range loader[LOADER_RANGES];
    int error;                     /* of the stop: a negative errno */
    int timeout_ms;
};

static void *map_array(size_t count, size_t size)
{
    void *memory = mmap(NULL, count * size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return memory == MAP_FAILED ? NULL : memory;
}

/* An array that will be filled: its pages faulted in by one call, not
 * one fault each (a fifth of a check of 1,000,000 blocks went to page
 * faults on a virtual machine). */
static void *map_filled_array(size_t count, size_t size)
{
    void *memory = mmap(NULL, count * size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return memory == MAP_FAILED ? map_array(count, size) : memory;
}

static void unmap_array(void *memory, size_t count, size_t size)
{
    if (memory != NULL)
        munmap(memory, count * size);
}

static int count_module(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)size;
    *(size_t *)context += info->dlpi_phnum;
    return 0;
}

/* Room for what the stop will find: the blocks now, and a margin for
 * those a thread allocates before it stops. */
static int workspace_map(struct workspace *work)
{
    size_t blocks = block_set_count();
    size_t segments = 0;
    dl_iterate_phdr(count_module, &segments);
    work->scan.block_capacity = blocks + blocks / 4 + 4096;
    work->scan.blocks = map_filled_array(work->scan.block_capacity, sizeof(struct leak_block));
    work->scan.frontier = map_filled_array(work->scan.block_capacity, sizeof(uint32_t));
    work->scan.addresses = map_filled_array(work->scan.block_capacity, sizeof(uintptr_t));
    work->scan.readable_capacity = READABLE_CAPACITY;
    work->scan.readable = map_array(READABLE_CAPACITY, sizeof(struct leak_range));
    /* dlopen may add modules before the loader lock is ours. */
    work->global_capacity = segments + 1024;
    work->globals = map_array(work->global_capacity, sizeof(struct leak_range));
    return work->scan.blocks && work->scan.frontier && work->scan.addresses &&
                   work->scan.readable && work->globals
               ? 0 : -ENOMEM;
}

static void workspace_unmap(struct workspace *work)
{
    unmap_array(work->scan.blocks, work->scan.block_capacity, sizeof(struct leak_block));
    unmap_array(work->scan.frontier, work->scan.block_capacity, sizeof(uint32_t));
    unmap_array(work->scan.addresses, work->scan.block_capacity, sizeof(uintptr_t));
    unmap_array(work->scan.readable, READABLE_CAPACITY, sizeof(struct leak_range));
    unmap_array(work->globals, work->global_capacity, sizeof(struct leak_range));
}

static int holds(const struct dl_phdr_info *info, uintptr_t address)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD && address >= start && address - start < segment->p_memsz)
            return 1;
    }
    return 0;
}

/* Each module's writable segments are roots, but this library's: its
 * tables point at every block. The loader's code says which blocks it
 * allocated. */
static int collect_module(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)size;
    struct workspace *work = context;
    int ours = holds(info, (uintptr_t)&heap);
    int loader = info->dlpi_addr != 0 && info->dlpi_addr == getauxval(AT_BASE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        struct leak_range range = { info->dlpi_addr + segment->p_vaddr,
                                    info->dlpi_addr + segment->p_vaddr + segment->p_memsz };
        if (segment->p_type != PT_LOAD)
            continue;
        if ((segment->p_flags & PF_W) && !ours && work->scan.global_count < work->global_capacity)
            work->globals[work->scan.global_count++] = range;
        if ((segment->p_flags & PF_X) && loader && work->scan.loader_count < LOADER_RANGES)
            work->loader[work->scan.loader_count++] = range;
    }
    return 0;
}

/* The first module's callback, with the loader's lock held: the roots,
 * then the stop. */
static int scan_locked(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)info;
    (void)size;
    struct workspace *work = context;
    work->scan.global_count = work->scan.loader_count = 0;
    dl_iterate_phdr(collect_module, work); /* the lock is recursive */
    work->scan.globals = work->globals;
    work->scan.loader = work->loader;
    if (backtrace_with_threads_stopped(work->timeout_ms, leak_scan_stopped, &work->scan) < 0)
        work->error = -errno;
    return 1;
}

/* glibc's static TLS size (its private interface, which LSan uses too);
 * 0 when unknown: then no thread's static TLS is scanned. */
static size_t static_tls_size(void)
{
    void (*get_info)(size_t *, size_t *) =
        (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    size_t size = 0, alignment = 0;
    if (get_info != NULL)
        get_info(&size, &alignment);
    return size;
}

/* ---- grouping ------------------------------------------------------------ */

static int by_site(const void *left, const void *right)
{
    const struct leak_group *a = left, *b = right;
    if (a->direct != b->direct)
        return b->direct - a->direct;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* Direct before indirect, then the most bytes, then the most objects. */
static int by_weight(const void *left, const void *right)
{
    const struct leak_group *a = left, *b = right;
    if (a->direct != b->direct)
        return b->direct - a->direct;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->objects != b->objects)
        return a->objects < b->objects ? 1 : -1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* One group per allocation stack and kind, into GROUPS (room for one a
 * leaked block). Returns how many. */
static size_t group_leaks(const struct leak_scan *scan, struct leak_group *groups,
                          struct leak_facts *facts)
{
    size_t count = 0;
    for (size_t i = 0; i < scan->block_count; i++) {
        const struct leak_block *block = &scan->blocks[i];
        if (block->tag != LEAK_UNREACHED && block->tag != LEAK_INDIRECT)
            continue;
        groups[count++] = (struct leak_group){ block->stack, block->tag == LEAK_UNREACHED,
                                               block->size, 1 };
        facts->bytes += block->size;
        facts->objects++;
    }
    qsort(groups, count, sizeof *groups, by_site);
    size_t merged = 0;
    for (size_t i = 0; i < count; i++) {
        if (merged > 0 && by_site(&groups[merged - 1], &groups[i]) == 0) {
            groups[merged - 1].bytes += groups[i].bytes;
            groups[merged - 1].objects += groups[i].objects;
        } else {
            groups[merged++] = groups[i];
        }
    }
    qsort(groups, merged, sizeof *groups, by_weight);
    return merged;
}

/* Leave out the groups a suppression matches, counting them there. */
static size_t suppress(struct leak_group *groups, size_t count, struct leak_facts *facts,
                       struct leak_suppressions *list)
{
    stack_id *stacks = malloc((count + 1) * sizeof *stacks);
    struct leak_suppression **matches = malloc((count + 1) * sizeof *matches);
    if (stacks == NULL || matches == NULL) {
        free(stacks);
        free(matches);
        return count; /* nothing suppressed: more said, not less */
    }
    for (size_t i = 0; i < count; i++)
        stacks[i] = groups[i].stack;
    leak_suppressions_match(list, stacks, count, matches);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (matches[i] == NULL) {
            groups[kept++] = groups[i];
            continue;
        }
        matches[i]->objects += groups[i].objects;
        matches[i]->bytes += groups[i].bytes;
        facts->objects -= groups[i].objects;
        facts->bytes -= groups[i].bytes;
    }
    free(stacks);
    free(matches);
    return kept;
}

/* ---- the check ----------------------------------------------------------- */

static atomic_int checking;

/* Group what the scan found, leave out what the suppressions match, and
 * write the report. Returns the leaked blocks, or a negative errno. */
static long report_leaks(const struct leak_scan *scan, int fd, int json)
{
    struct leak_group *groups = map_array(scan->block_count + 1, sizeof *groups);
    if (groups == NULL)
        return -ENOMEM;
    struct leak_suppressions suppressions;
    long result = leak_suppressions_load(&suppressions, heap.options.suppressions);
    if (result == 0) {
        struct leak_facts facts = { .groups = groups, .scan = scan,
                                    .suppressions = &suppressions,
                                    .suppressions_path = heap.options.suppressions };
        facts.group_count = group_leaks(scan, groups, &facts);
        facts.group_count = suppress(groups, facts.group_count, &facts, &suppressions);
        if (json)
            leak_report_json(fd, &facts);
        else
            leak_report_text(fd, &facts);
        result = (long)facts.objects;
    }
    leak_suppressions_free(&suppressions);
    unmap_array(groups, scan->block_count + 1, sizeof *groups);
    return result;
}

/* Check, and write the report to FD. SELF_STACK_POINTER: where the
 * caller's frames begin (its registers saved below them). Returns the
 * leaked blocks, or a negative errno. */
static long check(int fd, int json, uintptr_t self_stack_pointer)
{
    struct workspace work = { 0 };
    work.timeout_ms = heap.options.threads_timeout_ms;
    work.scan.self_stack_pointer = self_stack_pointer;
    work.scan.self_thread_pointer = (uintptr_t)__builtin_thread_pointer();
    work.scan.static_tls_size = static_tls_size();
    long result = workspace_map(&work);
    if (result == 0) {
        heap_scan_begin(); /* a thread that could not be stopped evicts nothing meanwhile */
        dl_iterate_phdr(scan_locked, &work);
        heap_scan_end();
        result = work.error;
    }
    if (result == 0)
        result = report_leaks(&work.scan, fd, json);
    workspace_unmap(&work);
    return result;
}

static long check_once(int fd, int json, uintptr_t self_stack_pointer)
{
    if (atomic_exchange(&checking, 1) != 0)
        return -EBUSY;
    heap_busy++; /* our own allocations (qsort, the symbolizer) are not the program's */
    long result = check(fd, json, self_stack_pointer);
    heap_busy--;
    atomic_store(&checking, 0);
    return result;
}

__attribute__((visibility("default"), noinline))
int backtrace_heap_leak_check(int fd, unsigned flags)
{
    if (fd < 0 || (flags & ~(unsigned)BACKTRACE_HEAP_LEAK_JSON) != 0) {
        errno = fd < 0 ? EBADF : EINVAL;
        return -1;
    }
    if (!heap_ready()) {
        errno = ENOSYS;
        return -1;
    }
    /* The caller's registers, saved in this frame: the scan starts here. */
    ucontext_t registers;
    getcontext(&registers);
    long result = check_once(fd, (flags & BACKTRACE_HEAP_LEAK_JSON) != 0, (uintptr_t)&registers);
    if (result < 0) {
        errno = (int)-result;
        return -1;
    }
    return result > INT_MAX ? INT_MAX : (int)result;
}

long leak_check_at_exit(uintptr_t self_stack_pointer)
{
    int fd = heap_report_open();
    long leaked = check_once(fd, heap.options.format == REPORT_JSON, self_stack_pointer);
    if (fd != STDERR_FILENO)
        close(fd);
    return leaked;
}
