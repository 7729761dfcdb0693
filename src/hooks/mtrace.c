/* mtrace.c: mtrace() and muntrace(), glibc's contract and trace format
 * (docs/MTRACE.md), without libc_malloc_debug.so.
 * World: normal (it runs inside malloc: a mutex, write(2), no malloc).
 *
 * Hand-written rather than glibc's, which we replace: glibc's writes
 * through stdio (a write per 512 bytes), looks a symbol up with dladdr per
 * event and is MT-Unsafe. Here every event is formatted on the caller's
 * stack, then appended under one mutex to a 64 KiB buffer that goes out in
 * one write when full: lines never interleave and keep call order, so a
 * block's "+" always precedes its "-". The caller is written relative to
 * its module, which glibc's mtrace script can resolve for a PIE. */
#define _GNU_SOURCE
#include "mtrace.h"
#include "../base/load_touched.h"
#include "heap.h"
#include "../base/fd_write.h"
#include "execinfo_ex.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACE_BUFFER_SIZE (64 * 1024)
#define EVENT_TEXT_SIZE 8192          /* on the caller's stack, inside malloc */

static LOAD_TOUCHED pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_int mtrace_tracing;            /* read without the lock, set under it */
static int trace_fd = -1;
static LOAD_TOUCHED int unbuffered;                /* after the library's destructor ran */
static char trace_buffer[TRACE_BUFFER_SIZE];
static LOAD_TOUCHED size_t trace_used;
static char executable[PATH_MAX];     /* the main program's path (its l_name is "") */


/* Under the lock. */
static void flush_buffer(void)
{
    if (trace_used > 0 && trace_fd >= 0)
        fd_write_all(trace_fd, trace_buffer, trace_used);
    trace_used = 0;
}

/* Under the lock: append one or more whole lines. */
static void append(const char *text, size_t length)
{
    if (trace_used + length > sizeof trace_buffer)
        flush_buffer();
    if (length > sizeof trace_buffer || unbuffered) {
        fd_write_all(trace_fd, text, length);
        return;
    }
    memcpy(trace_buffer + trace_used, text, length);
    trace_used += length;
}

/* One event's text, built on the caller's stack: a few bytes and hex
 * numbers at a time, so a plain pointer cursor (the general text_out was
 * a third of the tracing cost). A line that does not fit is dropped. */
struct line {
    char *at, *end;
    char start[EVENT_TEXT_SIZE];
};

static void line_bytes(struct line *line, const char *bytes, size_t length)
{
    if (line->at > line->end || (size_t)(line->end - line->at) < length) {
        line->at = line->end + 1; /* marks the overflow */
        return;
    }
    memcpy(line->at, bytes, length);
    line->at += length;
}

static void line_hex(struct line *line, uintptr_t value)
{
    char digits[2 + 16];
    int count = value == 0 ? 1 : (64 - __builtin_clzll(value) + 3) / 4;
    digits[0] = '0';
    digits[1] = 'x';
    for (int i = count - 1; i >= 0; i--, value >>= 4)
        digits[2 + i] = "0123456789abcdef"[value & 15];
    line_bytes(line, digits, 2 + (size_t)count);
}

static int line_overflowed(const struct line *line)
{
    return line->at > line->end;
}

/* "MODULE:[0xREL]" for the call that returns to RETURN_ADDRESS, or
 * "[0xADDR]" outside every module. */
static void put_where(struct line *line, uintptr_t return_address)
{
    uintptr_t call = return_address - 1;
    struct dl_find_object object;
    if (return_address == 0 || _dl_find_object((void *)call, &object) != 0 ||
        object.dlfo_link_map == NULL) {
        line_bytes(line, "[", 1);
        line_hex(line, return_address);
        line_bytes(line, "]", 1);
        return;
    }
    const struct link_map *map = object.dlfo_link_map;
    const char *path = map->l_name != NULL && map->l_name[0] != '\0' ? map->l_name : executable;
    line_bytes(line, path, strlen(path));
    line_bytes(line, ":[", 2);
    line_hex(line, call - map->l_addr);
    line_bytes(line, "]", 1);
}

/* "# stack FRAME..." of the calling code, for mtrace_frames=N; frames
 * that would not fit are left out, the line stays whole. */
static void put_stack(struct line *line)
{
    void *frames[64];
    int wanted = heap.options.mtrace_frames;
    if (wanted <= 0)
        return;
    int count = backtrace_skip_range(frames, wanted < 64 ? wanted : 64,
                                     (const void *)heap.own_start, (const void *)heap.own_end,
                                     heap_trace_memo());
    line_bytes(line, "# stack", 7);
    for (int i = 0; i < count; i++) {
        char *before = line->at;
        line_bytes(line, " ", 1);
        put_where(line, (uintptr_t)frames[i]);
        if (line_overflowed(line) || line->at == line->end) {
            line->at = before; /* no room for it and the newline */
            break;
        }
    }
    line_bytes(line, "\n", 1);
}

/* One line "@ WHERE OP 0xPTR[ 0xSIZE]". */
static void put_event(struct line *line, const void *caller, char op, uintptr_t pointer,
                      int with_size, size_t size)
{
    char operation[3] = { ' ', op, ' ' };
    line_bytes(line, "@ ", 2);
    put_where(line, (uintptr_t)caller);
    line_bytes(line, operation, 3);
    line_hex(line, pointer);
    if (with_size) {
        line_bytes(line, " ", 1);
        line_hex(line, size);
    }
    line_bytes(line, "\n", 1);
}

static void line_begin(struct line *line)
{
    line->at = line->start;
    line->end = line->start + sizeof line->start;
}

/* Under the lock, if still tracing. */
static void emit_locked(const struct line *line)
{
    if (!line_overflowed(line) && atomic_load_explicit(&mtrace_tracing, memory_order_relaxed))
        append(line->start, (size_t)(line->at - line->start));
}

static void trace_one(const void *caller, char op, uintptr_t pointer, int with_size,
                      size_t size)
{
    struct line line;
    line_begin(&line);
    put_event(&line, caller, op, pointer, with_size, size);
    put_stack(&line);
    pthread_mutex_lock(&trace_lock);
    emit_locked(&line);
    pthread_mutex_unlock(&trace_lock);
}

/* Set while this thread holds the lock across a realloc (below). */
static __thread int in_realloc __attribute__((tls_model("initial-exec")));

/* The events are traced only at the program's own calls: the library's
 * allocations (heap_busy) are its business, and so are the calls a
 * realloc hook makes inside a traced realloc. */
static int traced(void)
{
    return atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) && heap_busy == 0 &&
           !in_realloc;
}

void mtrace_allocation_traced(const void *caller, const void *pointer, size_t size)
{
    if (traced() && pointer != NULL) {
        heap_busy++;
        trace_one(caller, '+', (uintptr_t)pointer, 1, size);
        heap_busy--;
    }
}

void mtrace_release_traced(const void *caller, const void *pointer)
{
    if (traced() && pointer != NULL) {
        heap_busy++;
        trace_one(caller, '-', (uintptr_t)pointer, 0, 0);
        heap_busy--;
    }
}

/* realloc holds the lock from before the call (mtrace_realloc_begin) to
 * its lines, so that no other thread's "+" of OLD's memory, which the
 * call may give back to glibc, comes before its "<". */
int mtrace_realloc_begin_traced(void)
{
    if (!traced())
        return 0;
    pthread_mutex_lock(&trace_lock);
    in_realloc = 1;
    return 1;
}

/* realloc's cases as glibc writes them: from NULL a "+", to size 0 a "-",
 * a failure "! 0xOLD 0xSIZE", else "< 0xOLD" and "> 0xNEW 0xSIZE". Under
 * the lock. */
static void realloc_lines_locked(const void *caller, const void *old, const void *fresh,
                                 size_t size)
{
    struct line line;
    heap_busy++;
    line_begin(&line);
    if (old == NULL && fresh != NULL) {
        put_event(&line, caller, '+', (uintptr_t)fresh, 1, size);
    } else if (old != NULL && size == 0 && fresh == NULL) {
        put_event(&line, caller, '-', (uintptr_t)old, 0, 0);
    } else if (old != NULL && fresh == NULL) {
        put_event(&line, caller, '!', (uintptr_t)old, 1, size);
    } else if (old != NULL) {
        put_event(&line, caller, '<', (uintptr_t)old, 0, 0);
        put_event(&line, caller, '>', (uintptr_t)fresh, 1, size);
    }
    if (line.at > line.start)
        put_stack(&line);
    emit_locked(&line);
    heap_busy--;
}

void mtrace_realloc_end(const void *caller, const void *old, const void *fresh, size_t size)
{
    realloc_lines_locked(caller, old, fresh, size);
    in_realloc = 0;
    pthread_mutex_unlock(&trace_lock);
}

/* A realloc through a user's hook: the lock is not held across it (the
 * hook may take locks of its own that its other calls take before ours),
 * so its lines come after the call, as glibc writes them. */
void mtrace_reallocation_traced(const void *caller, const void *old, const void *fresh,
                                size_t size)
{
    if (!traced())
        return;
    pthread_mutex_lock(&trace_lock);
    realloc_lines_locked(caller, old, fresh, size);
    pthread_mutex_unlock(&trace_lock);
}

/* Before a heap error aborts the process: the lines that led to it go out
 * (the exit flush will not run). Skipped if the lock is busy. */
void mtrace_flush_now(void)
{
    if (!atomic_load_explicit(&mtrace_tracing, memory_order_relaxed) ||
        pthread_mutex_trylock(&trace_lock) != 0)
        return;
    flush_buffer();
    pthread_mutex_unlock(&trace_lock);
}

__attribute__((visibility("default")))
void mtrace(void)
{
    const char *path = secure_getenv("MALLOC_TRACE"); /* NULL in set-id programs */
    if (path == NULL || path[0] == '\0')
        return;
    heap_busy++;
    pthread_mutex_lock(&trace_lock);
    if (!atomic_load_explicit(&mtrace_tracing, memory_order_relaxed)) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
            executable[length > 0 ? length : 0] = '\0';
            trace_fd = fd;
            trace_used = 0;
            append("= Start\n", 8);
            atomic_store_explicit(&mtrace_tracing, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&trace_lock);
    heap_busy--;
}

__attribute__((visibility("default")))
void muntrace(void)
{
    pthread_mutex_lock(&trace_lock);
    if (atomic_load_explicit(&mtrace_tracing, memory_order_relaxed)) {
        atomic_store_explicit(&mtrace_tracing, 0, memory_order_relaxed);
        append("= End\n", 6);
        flush_buffer();
        close(trace_fd);
        trace_fd = -1;
    }
    pthread_mutex_unlock(&trace_lock);
}

/* fork: no line half in the buffer of both processes. */
void mtrace_before_fork(void)
{
    pthread_mutex_lock(&trace_lock);
    flush_buffer();
}

void mtrace_after_fork(void)
{
    pthread_mutex_unlock(&trace_lock);
}

/* At exit (or unload), without muntrace: what is buffered goes out, and
 * the frees of later destructors are written one by one. */
__attribute__((destructor))
static void flush_at_exit(void)
{
    pthread_mutex_lock(&trace_lock);
    flush_buffer();
    unbuffered = 1;
    pthread_mutex_unlock(&trace_lock);
}
