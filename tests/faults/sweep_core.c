/* sweep_core.c: the allocation-failure sweep of the core library
 * (libexecinfo_ex.a): backtrace_symbols, the symbol index builder
 * (backtrace_refresh_index, module_data_build), the libdw line path
 * (module_data_build with lines, backtrace_resolve).
 *
 * This program replaces malloc and its family (fault_core.h, over glibc's
 * __libc_malloc...), so libelf and libdw allocate through it too. Each
 * trial runs in a forked child (sweep.h): the setup, then the operation
 * with the Nth allocation failing, then its cleanup, then the same call
 * again with memory, whose result must be the reference's, and the live
 * block count must then have moved exactly as in the reference run.
 *
 * Usage: sweep_core [OPERATION...]   (default: all). Exit 0 when every
 * trial of every operation passed. FAULT_BUDGET: seconds per operation. */
#define _GNU_SOURCE
#define FAULT_REPLACE_MALLOC
#define FAULT_WITH_BACKTRACE
#include "fault_core.h"
#include "sweep.h"

#include "execinfo_ex.h"
#include "symbolize/index.h"
#include "symbolize/module_data.h"
#include "symbolize/debug_file.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define FRAMES 24

static void *frames[FRAMES];
static int frame_count;
static const char *fixture_path;
static char self_path[4096];
static char libc_path[4096];

/* ---- a trace with static functions in it, taken once in the parent ---- */

__attribute__((noinline)) static int capture_innermost(void)
{
    int n = backtrace(frames, FRAMES - 2);
    __asm__ volatile("" ::: "memory");
    return n;
}

__attribute__((noinline)) static int capture_middle(void)
{
    int n = capture_innermost();
    __asm__ volatile("" ::: "memory");
    return n;
}

__attribute__((noinline)) static int capture_outer(void)
{
    int n = capture_middle();
    __asm__ volatile("" ::: "memory");
    return n;
}

/* ---- the library's own mappings (index snapshots, module data) ---- */

/* The library's calls to mmap and munmap come here (it is linked into this
 * program; glibc's own malloc and loader use their internal calls): a
 * mapping is an allocation too, counted and failed like a malloc. */
static atomic_long live_maps;

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset)
{
    if (fault_take(__builtin_return_address(0))) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *map = (void *)syscall(SYS_mmap, address, length, protection, flags, fd, offset);
    if (map != MAP_FAILED)
        atomic_fetch_add(&live_maps, 1);
    return map;
}

int munmap(void *address, size_t length)
{
    int result = (int)syscall(SYS_munmap, address, length);
    if (result == 0)
        atomic_fetch_sub(&live_maps, 1);
    return result;
}

/* ---- helpers for the children ---- */

static void *fixture_handle;

/* Load the fixture library (before arming): the module set changes, so
 * the next symbolizing call rebuilds the index. Its function goes in the
 * trace as a return address. */
static int load_fixture(int *count)
{
    fixture_handle = dlopen(fixture_path, RTLD_NOW);
    if (fixture_handle == NULL) {
        sweep_note("dlopen %s: %s\n", fixture_path, dlerror());
        return -1;
    }
    void *function = dlsym(fixture_handle, "fixture_function");
    void *(*address)(void) = (void *(*)(void))dlsym(fixture_handle, "fixture_address");
    if (function == NULL || address == NULL)
        return -1;
    frames[frame_count] = (char *)function + 5;
    frames[frame_count + 1] = (char *)address() + 3;
    *count = frame_count + 2;
    return 0;
}

struct live {
    long blocks, maps;
};

static struct live live_now(void)
{
    return (struct live){ fault_live_now(), atomic_load(&live_maps) };
}

/* The result of the first call, kept without malloc for the verdict. */
static char result_text[1 << 16];

static void keep_text(const char *text)
{
    snprintf(result_text, sizeof result_text, "%s", text);
}

/* The end of every trial, everything freed (the operation's result and the
 * call made again with memory): the reference reports, a trial compares.
 * More blocks or mappings live than after the reference is a leak (fewer
 * is a cache the failure left empty). */
static int finish(long fail_at, long made, struct live before, int verdict)
{
    struct live after = live_now();
    long blocks = after.blocks - before.blocks, maps = after.maps - before.maps;
    if (fail_at == 0) {
        sweep_reference_report(made, blocks, maps, result_text);
        return OUTCOME_REFERENCE;
    }
    if (blocks > sweep_expected.delta || maps > sweep_expected.maps) {
        sweep_note("    live blocks moved by %ld, mappings by %ld; after the reference: %ld, %ld\n",
                   blocks, maps, sweep_expected.delta, sweep_expected.maps);
        return OUTCOME_LEAK;
    }
    return verdict;
}

/* A trial whose allocation FAIL_AT was never reached. */
static int not_reached(long fail_at, long made)
{
    return fail_at != 0 && !atomic_load(&fault_fired) && made < fail_at;
}

static char *join_strings(char **strings, int count)
{
    size_t bytes = 1;
    for (int i = 0; i < count; i++)
        bytes += strlen(strings[i]) + 1;
    char *text = malloc(bytes), *at = text;
    for (int i = 0; i < count; i++)
        at += sprintf(at, "%s\n", strings[i]);
    *at = '\0';
    return text;
}

/* Compare TEXT (freed here) with the reference; sets the kept text. */
static int same_as_reference(char *text, long fail_at, const char *when)
{
    int same = fail_at == 0 || strcmp(text, sweep_expected.text) == 0;
    if (fail_at == 0)
        keep_text(text);
    else if (!same)
        sweep_note("    %s:\n%s    the reference:\n%s", when, text, sweep_expected.text);
    free(text);
    return same;
}

/* ---- backtrace_symbols ---- */

static int symbols_trial(long fail_at, int with_fixture)
{
    int count = frame_count;
    if (with_fixture && load_fixture(&count) < 0)
        return OUTCOME_SETUP;
    struct live before = live_now();
    errno = 0;
    fault_arm(fail_at);
    char **strings = backtrace_symbols(frames, count);
    int error = errno;
    long made = fault_disarm();
    int verdict = OUTCOME_SAME;

    if (not_reached(fail_at, made)) {
        free(strings);
        return OUTCOME_NOT_FIRED;
    }
    if (strings == NULL) {
        if (fail_at == 0 || error != ENOMEM) {
            sweep_note("    NULL with errno %d (%s), want ENOMEM\n", error, strerror(error));
            return OUTCOME_WRONG_ERROR;
        }
        verdict = OUTCOME_FAILED_CLEANLY;
    } else {
        char *text = join_strings(strings, count);
        free(strings);
        if (!same_as_reference(text, fail_at, "the strings"))
            verdict = OUTCOME_DEGRADED;
    }
    /* With memory again: whole. */
    char **again = backtrace_symbols(frames, count);
    if (again == NULL) {
        sweep_note("    the call after the failure failed too\n");
        return OUTCOME_NO_RECOVERY;
    }
    char *text = join_strings(again, count);
    free(again);
    if (!same_as_reference(text, fail_at, "the call after the failure"))
        return OUTCOME_NO_RECOVERY;
    return finish(fail_at, made, before, verdict);
}

static int trial_symbols(long fail_at)
{
    return symbols_trial(fail_at, 0);
}

static int trial_symbols_after_dlopen(long fail_at)
{
    return symbols_trial(fail_at, 1);
}

/* ---- backtrace_refresh_index after a dlopen ---- */

static int trial_refresh_index(long fail_at)
{
    int count;
    if (load_fixture(&count) < 0)
        return OUTCOME_SETUP;
    struct live before = live_now();
    fault_arm(fail_at);
    int result = backtrace_refresh_index();
    long made = fault_disarm();
    int verdict = OUTCOME_SAME;

    if (not_reached(fail_at, made))
        return OUTCOME_NOT_FIRED;
    if (result == -ENOMEM && fail_at != 0)
        verdict = OUTCOME_FAILED_CLEANLY;
    else if (result != 0) {
        sweep_note("    backtrace_refresh_index returned %d, want 0 or -ENOMEM\n", result);
        return OUTCOME_WRONG_ERROR;
    }
    /* With memory again: it must build (or have built) the whole index. */
    int again = backtrace_refresh_index();
    char **strings = backtrace_symbols(frames, count);
    if (again != 0 || strings == NULL) {
        sweep_note("    after the failure: refresh %d, backtrace_symbols %p\n", again,
                   (void *)strings);
        free(strings);
        return OUTCOME_NO_RECOVERY;
    }
    char *text = join_strings(strings, count);
    free(strings);
    if (!same_as_reference(text, fail_at, "backtrace_symbols after the refresh"))
        return result == 0 ? OUTCOME_WRONG_RESULT : OUTCOME_NO_RECOVERY;
    return finish(fail_at, made, before, verdict);
}

/* ---- module_data_build, one file ---- */

struct data_target {
    const char *path;
    size_t line_budget;
};

static char *describe_data(const struct module_data *data)
{
    uint64_t hash = 1469598103934665603u;
#define MIX(value) (hash = (hash ^ (uint64_t)(value)) * 1099511628211u)
    for (size_t i = 0; i < data->symbol_count; i++) {
        MIX(data->symbols[i].start);
        MIX(data->symbols[i].size);
        for (const char *c = data->strings + data->symbols[i].name; *c; c++)
            MIX(*c);
    }
    for (size_t i = 0; i < data->line_count; i++) {
        MIX(data->lines[i].address);
        MIX(data->lines[i].line);
        for (const char *c = data->strings + data->lines[i].file; *c; c++)
            MIX(*c);
    }
#undef MIX
    char *text = malloc(200);
    snprintf(text, 200, "%zu symbols, %zu lines, truncated %d, hash %016llx\n",
             data->symbol_count, data->line_count, data->lines_truncated,
             (unsigned long long)hash);
    return text;
}

static unsigned file_build_id(const char *path, unsigned char *id)
{
    unsigned length = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF)
        length = elf_file_build_id(elf, id, MODULE_BUILD_ID_MAX);
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return length;
}

static int data_trial(long fail_at, const struct data_target *target)
{
    struct module_info module;
    size_t line_bytes;

    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = (char *)target->path;
    module.end = UINTPTR_MAX;
    elf_version(EV_CURRENT);
    module.build_id_length = file_build_id(target->path, module.build_id);
    struct live before = live_now();
    errno = 0;
    fault_arm(fail_at);
    const struct module_data *data = module_data_build(&module, target->line_budget, &line_bytes);
    int error = errno;
    long made = fault_disarm();

    if (not_reached(fail_at, made))
        return OUTCOME_NOT_FIRED;
    if (data == NULL) {
        if (fail_at == 0 || error != ENOMEM) {
            sweep_note("    NULL with errno %d (%s), want ENOMEM%s\n", error, strerror(error),
                       fail_at ? "" : " (in the reference!)");
            return OUTCOME_WRONG_ERROR;
        }
        return finish(fail_at, made, before, OUTCOME_FAILED_CLEANLY);
    }
    char *text = describe_data(data);
    munmap((void *)data, data->mapped_bytes); /* what dropping it is */
    /* Data with errno ENOMEM may lack some: the index reads it again. */
    if (error == ENOMEM && fail_at != 0) {
        free(text);
        return finish(fail_at, made, before, OUTCOME_FAILED_CLEANLY);
    }
    if (error != 0) {
        sweep_note("    data with errno %d (%s), want 0 or ENOMEM\n", error, strerror(error));
        free(text);
        return OUTCOME_WRONG_ERROR;
    }
    /* Without ENOMEM, the index keeps what it gets: a silent loss is wrong. */
    int verdict = same_as_reference(text, fail_at, "the data") ? OUTCOME_SAME
                                                                : OUTCOME_WRONG_RESULT;
    return finish(fail_at, made, before, verdict);
}

static int trial_data_self_lines(long fail_at)
{
    struct data_target target = { self_path, (size_t)64 << 20 };
    return data_trial(fail_at, &target);
}

static int trial_data_fixture_lines(long fail_at)
{
    struct data_target target = { fixture_path, (size_t)64 << 20 };
    return data_trial(fail_at, &target);
}

static int trial_data_libc(long fail_at)
{
    struct data_target target = { libc_path, 0 };
    return data_trial(fail_at, &target);
}

/* ---- backtrace_resolve ---- */

static char *describe_frames(const struct backtrace_frame *resolved, int count)
{
    size_t capacity = 256 + (size_t)count * 1200, used = 0;
    char *text = malloc(capacity);
    text[0] = '\0';
    for (int i = 0; i < count; i++) {
        const struct backtrace_frame *f = &resolved[i];
        used += (size_t)snprintf(text + used, capacity - used, "%d %p %s %s+0x%lx %s:%u:%u%s\n",
                                 f->index, f->address, f->module ? f->module : "-",
                                 f->function ? f->function : "-", f->offset,
                                 f->file ? f->file : "-", f->line, f->column,
                                 f->inlined ? " inlined" : "");
    }
    return text;
}

static int resolve_frames = 3;

static int trial_resolve(long fail_at)
{
    struct backtrace_frame *resolved = NULL;
    int count = frame_count < resolve_frames ? frame_count : resolve_frames;
    struct live before = live_now();
    errno = 0;
    fault_arm(fail_at);
    int result = backtrace_resolve(frames, count, 0, &resolved);
    int error = errno;
    long made = fault_disarm();
    int verdict = OUTCOME_SAME;

    if (not_reached(fail_at, made)) {
        free(resolved);
        return OUTCOME_NOT_FIRED;
    }
    if (result < 0) {
        if (fail_at == 0 || error != ENOMEM || resolved != NULL) {
            sweep_note("    %d with errno %d (%s), frames %p; want -1, ENOMEM, NULL\n", result,
                       error, strerror(error), (void *)resolved);
            return OUTCOME_WRONG_ERROR;
        }
        verdict = OUTCOME_FAILED_CLEANLY;
    } else {
        char *text = describe_frames(resolved, result);
        free(resolved);
        if (!same_as_reference(text, fail_at, "the frames"))
            verdict = OUTCOME_DEGRADED;
    }
    struct backtrace_frame *again = NULL;
    int again_count = backtrace_resolve(frames, count, 0, &again);
    if (again_count < 0) {
        sweep_note("    the call after the failure failed too\n");
        return OUTCOME_NO_RECOVERY;
    }
    char *text = describe_frames(again, again_count);
    free(again);
    if (!same_as_reference(text, fail_at, "the call after the failure"))
        return OUTCOME_NO_RECOVERY;
    return finish(fail_at, made, before, verdict);
}

/* The program's frames and libc's (whose debug file, when installed, is
 * large: thousands of allocations, sampled). */
static int trial_resolve_wide(long fail_at)
{
    resolve_frames = 6;
    return trial_resolve(fail_at);
}

/* ---- the operations ---- */

struct operation {
    const char *name;
    sweep_trial *trial;
    int degraded_ok;   /* a success with less in it, whole on the next call */
};

static const struct operation operations[] = {
    { "backtrace_symbols", trial_symbols, 0 },
    { "backtrace_symbols+refresh", trial_symbols_after_dlopen, 1 },
    { "backtrace_refresh_index", trial_refresh_index, 0 },
    { "module_data_build(libc)", trial_data_libc, 0 },
    { "module_data_build(fixture,lines)", trial_data_fixture_lines, 0 },
    { "module_data_build(self,lines)", trial_data_self_lines, 0 },
    { "backtrace_resolve", trial_resolve, 1 },
    { "backtrace_resolve(libc frames)", trial_resolve_wide, 1 },
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)size;
    (void)context;
    if (strstr(info->dlpi_name, "/libc.so") != NULL) {
        snprintf(libc_path, sizeof libc_path, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    double budget = getenv("FAULT_BUDGET") ? atof(getenv("FAULT_BUDGET")) : 20;

    setvbuf(stdout, NULL, _IOLBF, 0);
    fixture_path = getenv("FIXTURE_LIB");
    if (fixture_path == NULL) {
        fprintf(stderr, "sweep_core: FIXTURE_LIB must name build/tests/fixture_lib.so\n");
        return 2;
    }
    ssize_t length = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[length > 0 ? length : 0] = '\0';
    dl_iterate_phdr(find_libc, NULL);
    frame_count = capture_outer();
    /* A second capture claims this thread's walk memo (one page, kept:
     * src/unwind/thread_memo.c) now, not inside a trial, where the fault
     * report's own capture of a failed allocation would count its
     * mapping as a leak that the reference never made. Into a buffer of
     * its own: the trials' frames stay main's first call. */
    void *warm[8];
    backtrace(warm, 8);
    backtrace_refresh_index();
    for (size_t i = 0; i < sizeof operations / sizeof operations[0]; i++) {
        int wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], operations[i].name) == 0;
        if (wanted)
            sweep_operation(operations[i].name, operations[i].trial, budget,
                            operations[i].degraded_ok, &failed);
    }
    printf("sweep_core: %s\n", failed ? "FAILED" : "all trials passed");
    return failed ? 1 : 0;
}
