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
#include "heap.h"
#include "../base/fd_write.h"
#include "../base/text_out.h"
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

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int tracing;            /* read without the lock, set under it */
static int trace_fd = -1;
static int unbuffered;                /* after the library's destructor ran */
static char trace_buffer[TRACE_BUFFER_SIZE];
static size_t trace_used;
static char executable[PATH_MAX];     /* the main program's path (its l_name is "") */

static __thread struct backtrace_memo trace_memo __attribute__((tls_model("initial-exec")));

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

/* "MODULE:[0xREL]" for the call that returns to RETURN_ADDRESS, or
 * "[0xADDR]" outside every module. */
static void put_where(struct text_out *out, uintptr_t return_address)
{
    uintptr_t call = return_address - 1;
    struct dl_find_object object;
    if (return_address == 0 || _dl_find_object((void *)call, &object) != 0 ||
        object.dlfo_link_map == NULL) {
        text_out_string(out, "[0x");
        text_out_hex(out, return_address);
        text_out_char(out, ']');
        return;
    }
    const struct link_map *map = object.dlfo_link_map;
    const char *path = map->l_name != NULL && map->l_name[0] != '\0' ? map->l_name : executable;
    text_out_string(out, path);
    text_out_string(out, ":[0x");
    text_out_hex(out, call - map->l_addr);
    text_out_char(out, ']');
}

static void put_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "0x");
    text_out_hex(out, value);
}

/* "# stack FRAME..." of the calling code, for mtrace_frames=N; frames
 * that would not fit the text are left out, the line stays whole. */
static void put_stack(struct text_out *out)
{
    void *frames[64];
    int wanted = heap.options.mtrace_frames;
    if (wanted <= 0)
        return;
    int count = backtrace_skip_range(frames, wanted < 64 ? wanted : 64,
                                     (const void *)heap.own_start, (const void *)heap.own_end,
                                     &trace_memo);
    text_out_string(out, "# stack");
    for (int i = 0; i < count; i++) {
        size_t before = out->total;
        text_out_char(out, ' ');
        put_where(out, (uintptr_t)frames[i]);
        if (out->total + 1 > out->capacity) {
            out->total = out->length = before;
            break;
        }
    }
    text_out_char(out, '\n');
}

/* One line "@ WHERE OP 0xPTR[ 0xSIZE]". */
static void put_event(struct text_out *out, const void *caller, char op, uintptr_t pointer,
                      int with_size, size_t size)
{
    text_out_string(out, "@ ");
    put_where(out, (uintptr_t)caller);
    text_out_char(out, ' ');
    text_out_char(out, op);
    text_out_char(out, ' ');
    put_hex(out, pointer);
    if (with_size) {
        text_out_char(out, ' ');
        put_hex(out, size);
    }
    text_out_char(out, '\n');
}

/* Under the lock, if still tracing; an event whose text did not fit (a
 * module path of thousands of bytes) is left out rather than cut. */
static void emit_locked(const struct text_out *out)
{
    if (out->total <= out->capacity && atomic_load_explicit(&tracing, memory_order_relaxed))
        append(out->buffer, out->total);
}

static void trace_one(const void *caller, char op, uintptr_t pointer, int with_size,
                      size_t size)
{
    char text[EVENT_TEXT_SIZE];
    struct text_out out;
    text_out_init_buffer(&out, text, sizeof text);
    put_event(&out, caller, op, pointer, with_size, size);
    put_stack(&out);
    pthread_mutex_lock(&trace_lock);
    emit_locked(&out);
    pthread_mutex_unlock(&trace_lock);
}

/* Set while this thread holds the lock across a realloc (below). */
static __thread int in_realloc __attribute__((tls_model("initial-exec")));

/* The events are traced only at the program's own calls: the library's
 * allocations (heap_busy) are its business, and so are the calls a
 * realloc hook makes inside a traced realloc. */
static int traced(void)
{
    return atomic_load_explicit(&tracing, memory_order_relaxed) && heap_busy == 0 &&
           !in_realloc;
}

void mtrace_allocation(const void *caller, const void *pointer, size_t size)
{
    if (traced() && pointer != NULL) {
        heap_busy++;
        trace_one(caller, '+', (uintptr_t)pointer, 1, size);
        heap_busy--;
    }
}

void mtrace_release(const void *caller, const void *pointer)
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
int mtrace_realloc_begin(void)
{
    if (!traced())
        return 0;
    pthread_mutex_lock(&trace_lock);
    in_realloc = 1;
    return 1;
}

/* realloc's cases as glibc writes them: from NULL a "+", to size 0 a "-",
 * a failure "! 0xOLD 0xSIZE", else "< 0xOLD" and "> 0xNEW 0xSIZE". */
void mtrace_realloc_end(const void *caller, const void *old, const void *fresh, size_t size)
{
    char text[EVENT_TEXT_SIZE];
    struct text_out out;
    heap_busy++;
    text_out_init_buffer(&out, text, sizeof text);
    if (old == NULL && fresh != NULL) {
        put_event(&out, caller, '+', (uintptr_t)fresh, 1, size);
    } else if (old != NULL && size == 0 && fresh == NULL) {
        put_event(&out, caller, '-', (uintptr_t)old, 0, 0);
    } else if (old != NULL && fresh == NULL) {
        put_event(&out, caller, '!', (uintptr_t)old, 1, size);
    } else if (old != NULL) {
        put_event(&out, caller, '<', (uintptr_t)old, 0, 0);
        put_event(&out, caller, '>', (uintptr_t)fresh, 1, size);
    }
    if (out.total > 0)
        put_stack(&out);
    emit_locked(&out);
    in_realloc = 0;
    pthread_mutex_unlock(&trace_lock);
    heap_busy--;
}

__attribute__((visibility("default")))
void mtrace(void)
{
    const char *path = secure_getenv("MALLOC_TRACE"); /* NULL in set-id programs */
    if (path == NULL || path[0] == '\0')
        return;
    heap_busy++;
    pthread_mutex_lock(&trace_lock);
    if (!atomic_load_explicit(&tracing, memory_order_relaxed)) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
            executable[length > 0 ? length : 0] = '\0';
            trace_fd = fd;
            trace_used = 0;
            append("= Start\n", 8);
            atomic_store_explicit(&tracing, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&trace_lock);
    heap_busy--;
}

__attribute__((visibility("default")))
void muntrace(void)
{
    pthread_mutex_lock(&trace_lock);
    if (atomic_load_explicit(&tracing, memory_order_relaxed)) {
        atomic_store_explicit(&tracing, 0, memory_order_relaxed);
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
