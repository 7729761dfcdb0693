/* sweep_mtrace.c: the allocation-failure sweep of mtrace() and muntrace()
 * in libexecinfo_ex_hooks.so, which this program is linked with.
 *
 * Inside malloc interposition "an allocation that fails" is glibc's: the
 * hooks library forwards every block to glibc's __libc_malloc,
 * __libc_calloc, __libc_realloc and __libc_memalign, which this program
 * defines (a definition in the program comes first in the lookup order)
 * over the real ones, with fault_core.h's countdown. So a failure is seen
 * as glibc running out of memory under the layer: the program's malloc
 * (through the hooks and the trace) and the layer's own allocations alike.
 * mtrace() and muntrace() themselves must make no allocation at all (they
 * run inside malloc; docs/MTRACE.md): the first operation checks that.
 *
 * The traced workload makes the program's usual calls (malloc, calloc,
 * strdup, realloc, posix_memalign, aligned_alloc, fopen/fclose, free);
 * each one that fails must fail as glibc's does (NULL with errno ENOMEM,
 * posix_memalign ENOMEM, realloc leaving the old block whole), the trace
 * must stay well formed and balanced (every "+" freed by a "-" or moved by
 * "<"/">", no "-" of a pointer never allocated, "= Start" ... "= End"),
 * and glibc's live block count must be back where it was once the
 * workload freed everything. Needs EXECINFO_EX_OPTIONS=quarantine=0 (a
 * freed block otherwise waits in the quarantine).
 *
 *   sweep_mtrace DIR           the sweep; trace files go in DIR
 *   sweep_mtrace --produce DIR a trace (DIR/trace, with mtrace_frames) and
 *                              two state blobs (DIR/before.state,
 *                              DIR/after.state) for the leak tool's sweep */
#define _GNU_SOURCE
#define FAULT_WITH_BACKTRACE
#include "fault_core.h"
#include "sweep.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <mcheck.h>
#include <stdint.h>

/* ---- glibc's allocator, under the hooks library ---- */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_memalign)(size_t, size_t);
static __thread int resolving;

/* While dlsym resolves the real ones: blocks from here, with a size word
 * before each as glibc's chunks have (the hooks library reads it). */
static char arena[1 << 20] __attribute__((aligned(4096)));
static size_t arena_used;

static int in_arena(const void *pointer)
{
    return (const char *)pointer >= arena && (const char *)pointer < arena + sizeof arena;
}

static void *arena_take(size_t size, size_t alignment)
{
    if (alignment < 16)
        alignment = 16;
    size_t at = (arena_used + 16 + alignment - 1) & ~(alignment - 1);
    size_t chunk = ((size + 15) & ~(size_t)15) + 16;
    if (at + chunk > sizeof arena)
        return NULL;
    ((size_t *)(arena + at))[-1] = chunk | 1;
    arena_used = at + chunk;
    return arena + at;
}

static int resolve_real(void)
{
    if (real_memalign != NULL)
        return 1;
    if (resolving)
        return 0;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "__libc_malloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "__libc_free");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "__libc_calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "__libc_realloc");
    void *memalign_function = dlsym(RTLD_NEXT, "__libc_memalign");
    resolving = 0;
    real_memalign = (void *(*)(size_t, size_t))memalign_function;
    return real_memalign != NULL;
}

#define EXPORT __attribute__((visibility("default")))

EXPORT void *__libc_malloc(size_t size)
{
    if (!resolve_real())
        return arena_take(size, 16);
    if (fault_take(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = real_malloc(size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

EXPORT void __libc_free(void *pointer)
{
    if (pointer == NULL || in_arena(pointer))
        return;
    fault_count_live(-1);
    real_free(pointer);
}

EXPORT void *__libc_calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!resolve_real())
        return arena_take(total, 16); /* static: zero */
    if (fault_take(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = real_calloc(count, size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

EXPORT void *__libc_realloc(void *pointer, size_t size)
{
    if (pointer == NULL)
        return __libc_malloc(size);
    if (in_arena(pointer)) {
        void *moved = __libc_malloc(size);
        size_t old = (((size_t *)pointer)[-1] & ~(size_t)7) - 8;
        if (moved != NULL)
            memcpy(moved, pointer, old < size ? old : size);
        return moved;
    }
    if (size == 0) {
        __libc_free(pointer);
        return NULL;
    }
    if (fault_take(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return real_realloc(pointer, size);
}

EXPORT void *__libc_memalign(size_t alignment, size_t size)
{
    if (!resolve_real())
        return arena_take(size, alignment);
    if (fault_take(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    void *pointer = real_memalign(alignment, size);
    if (pointer != NULL)
        fault_count_live(1);
    return pointer;
}

/* ---- the trace ---- */

static const char *trace_directory;
static char trace_path[4096];

/* Replay the trace: well formed, balanced. Returns 0, or -1 with a note. */
static int check_trace(const char *path, long *events)
{
    FILE *file = fopen(path, "re");
    if (file == NULL) {
        sweep_note("    no trace %s: %s\n", path, strerror(errno));
        return -1;
    }
    uintptr_t live[256];
    int live_count = 0, started = 0, ended = 0, bad = 0;
    char line[4096];
    long number = 0;
    *events = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        number++;
        if (ended) {
            sweep_note("    line %ld after = End: %s", number, line);
            bad = 1;
            break;
        }
        if (strcmp(line, "= Start\n") == 0) {
            started += 1;
            continue;
        }
        if (strcmp(line, "= End\n") == 0) {
            ended = 1;
            continue;
        }
        if (strncmp(line, "# stack", 7) == 0)
            continue;
        char where[2048], operation;
        uintptr_t pointer;
        unsigned long size;
        int fields = sscanf(line, "@ %2047s %c 0x%" SCNxPTR " 0x%lx", where, &operation, &pointer,
                            &size);
        if (!started || fields < 3 || strchr("+-<>!", operation) == NULL) {
            sweep_note("    line %ld malformed: %s", number, line);
            bad = 1;
            break;
        }
        (*events)++;
        int at = -1;
        for (int i = 0; i < live_count; i++)
            if (live[i] == pointer)
                at = i;
        if (operation == '+' || operation == '>') {
            if (at >= 0 || pointer == 0 || live_count == 256 || fields != 4) {
                sweep_note("    line %ld: allocation of a live pointer, or NULL: %s", number, line);
                bad = 1;
                break;
            }
            live[live_count++] = pointer;
        } else if (at < 0) {
            sweep_note("    line %ld: %c of a pointer not allocated: %s", number, operation, line);
            bad = 1;
            break;
        } else if (operation != '!') {
            live[at] = live[--live_count];
        }
    }
    fclose(file);
    if (!bad && (started != 1 || !ended)) {
        sweep_note("    the trace has %d '= Start' and %s '= End'\n", started, ended ? "an" : "no");
        bad = 1;
    }
    if (!bad && live_count != 0) {
        sweep_note("    the trace leaves %d blocks allocated, the workload freed all\n", live_count);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* ---- the traced workload ---- */

static int workload_failures;   /* calls that failed, all as documented */
static int workload_wrong;

static void expect_enomem(const char *what, const void *result, int error)
{
    if (result != NULL)
        return;
    workload_failures++;
    if (error != ENOMEM) {
        sweep_note("    %s failed with errno %d, want ENOMEM\n", what, error);
        workload_wrong = 1;
    }
}

__attribute__((noinline)) static void workload(void)
{
    static const char pattern[] = "fault sweep";
    errno = 0;
    char *a = malloc(64);
    expect_enomem("malloc", a, errno);
    errno = 0;
    unsigned char *b = calloc(4, 32);
    expect_enomem("calloc", b, errno);
    for (int i = 0; b != NULL && i < 128; i++)
        if (b[i] != 0) {
            sweep_note("    calloc's block not zeroed\n");
            workload_wrong = 1;
            break;
        }
    errno = 0;
    char *c = strdup(pattern);
    expect_enomem("strdup", c, errno);
    if (a != NULL) {
        memcpy(a, pattern, sizeof pattern);
        errno = 0;
        char *grown = realloc(a, 4096);
        expect_enomem("realloc", grown, errno);
        if (grown == NULL && memcmp(a, pattern, sizeof pattern) != 0) {
            sweep_note("    a failed realloc changed the old block\n");
            workload_wrong = 1;
        }
        if (grown != NULL)
            a = grown;
    }
    void *d = NULL;
    int result = posix_memalign(&d, 64, 200);
    if (result != 0) {
        workload_failures++;
        if (result != ENOMEM || d != NULL) {
            sweep_note("    posix_memalign returned %d, want ENOMEM\n", result);
            workload_wrong = 1;
        }
    } else if ((uintptr_t)d % 64 != 0) {
        sweep_note("    posix_memalign's block is not aligned\n");
        workload_wrong = 1;
    }
    errno = 0;
    void *e = aligned_alloc(32, 96);
    expect_enomem("aligned_alloc", e, errno);
    errno = 0;
    FILE *file = fopen("/dev/null", "we");
    expect_enomem("fopen", file, errno);
    if (file != NULL) {
        fprintf(file, "%s %p\n", pattern, (void *)a);
        fclose(file);
    }
    free(e);
    free(d);
    free(c);
    free(b);
    free(a);
}

/* ---- the operations ---- */

static void set_trace_path(long fail_at)
{
    snprintf(trace_path, sizeof trace_path, "%s/trace.%ld", trace_directory, fail_at);
    setenv("MALLOC_TRACE", trace_path, 1);
}

/* mtrace() and muntrace() alone: no allocation (the reference's count). */
static int trial_mtrace_alone(long fail_at)
{
    set_trace_path(fail_at);
    long before = fault_live_now();
    fault_arm(fail_at);
    mtrace();
    muntrace();
    long made = fault_disarm();
    long events;
    if (check_trace(trace_path, &events) < 0)
        return OUTCOME_WRONG_RESULT;
    unlink(trace_path);
    if (fail_at == 0) {
        sweep_reference_report(made, fault_live_now() - before, 0, "");
        return OUTCOME_REFERENCE;
    }
    return atomic_load(&fault_fired) ? OUTCOME_SAME : OUTCOME_NOT_FIRED;
}

static int trial_traced_workload(long fail_at)
{
    set_trace_path(fail_at);
    long before = fault_live_now();
    fault_arm(fail_at);
    mtrace();
    workload();
    muntrace();
    long made = fault_disarm();
    long delta = fault_live_now() - before;
    long events;
    int trace_bad = check_trace(trace_path, &events) < 0;
    unlink(trace_path);
    if (fail_at == 0) {
        char text[64];
        snprintf(text, sizeof text, "%ld events\n", events);
        if (trace_bad || workload_failures != 0)
            return OUTCOME_SETUP;
        sweep_reference_report(made, delta, 0, text);
        return OUTCOME_REFERENCE;
    }
    if (!atomic_load(&fault_fired))
        return OUTCOME_NOT_FIRED;
    if (workload_wrong)
        return OUTCOME_WRONG_ERROR;
    if (trace_bad)
        return OUTCOME_WRONG_RESULT;
    if (delta > sweep_expected.delta) {
        sweep_note("    glibc's live blocks moved by %ld, the reference's by %ld\n", delta,
                   sweep_expected.delta);
        return OUTCOME_LEAK;
    }
    return workload_failures > 0 ? OUTCOME_FAILED_CLEANLY : OUTCOME_SAME;
}

/* ---- inputs for the leak tool's sweep ---- */

static void *leaked[8];

__attribute__((noinline)) static void leak_some(int round)
{
    for (int i = 0; i < 4; i++)
        leaked[round * 4 + i] = malloc(100 + (size_t)i * 10);
}

static int save_state(const char *path)
{
    void *state = malloc_get_state();
    if (state == NULL)
        return -1;
    size_t size = malloc_state_size(state);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, state, size) == (ssize_t)size;
    if (fd >= 0)
        close(fd);
    free(state);
    return ok ? 0 : -1;
}

static int produce(const char *directory)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/trace", directory);
    setenv("MALLOC_TRACE", path, 1);
    snprintf(path, sizeof path, "%s/before.state", directory);
    if (save_state(path) < 0)
        return 1;
    mtrace();
    leak_some(0);
    workload();
    leak_some(1);
    free(leaked[2]);
    muntrace();
    snprintf(path, sizeof path, "%s/after.state", directory);
    return save_state(path) < 0;
}

int main(int argc, char **argv)
{
    int failed = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "--produce") == 0)
        return produce(argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: sweep_mtrace DIR | sweep_mtrace --produce DIR\n");
        return 2;
    }
    const char *options = getenv("EXECINFO_EX_OPTIONS");
    if (options == NULL || strstr(options, "quarantine=0") == NULL) {
        fprintf(stderr, "sweep_mtrace: needs EXECINFO_EX_OPTIONS with quarantine=0\n");
        return 2;
    }
    trace_directory = argv[1];
    struct sweep_tally alone =
        sweep_operation("mtrace+muntrace", trial_mtrace_alone, 20, 0, &failed);
    if (alone.points != 0) {
        printf("mtrace+muntrace: %ld allocations, want none (they run inside malloc)\n",
               alone.points);
        failed = 1;
    }
    sweep_operation("mtrace(traced workload)", trial_traced_workload, 30, 0, &failed);
    printf("sweep_mtrace: %s\n", failed ? "FAILED" : "all trials passed");
    return failed;
}
