/* heap_report.c: write a heap error with the stacks that explain it.
 * World: signal-safe: it runs inside free() with the heap possibly
 * damaged, so it uses only the stack buffer writer, the depot and the
 * core library's AS-Safe printing.
 *
 * Text, one block of lines between "*** execinfo_ex: heap error" and
 * "*** end of heap report", or one JSON object with format=json
 * (docs/HEAP_REPORT.md). */
#define _GNU_SOURCE
#include "heap_report.h"
#include "heap.h"
#include "mtrace.h"
#include "../base/fd_write.h"
#include "../base/json_out.h"
#include "../base/report_file.h"
#include "../base/text_out.h"
#include "execinfo_ex.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORT_FRAMES 64

static const char *const kind_names[] = {
    [HEAP_DOUBLE_FREE] = "double-free",
    [HEAP_INVALID_FREE] = "invalid-free",
    [HEAP_INTERIOR_FREE] = "invalid-free-inside-block",
    [HEAP_OVERFLOW] = "heap-buffer-overflow",
    [HEAP_UNDERFLOW] = "heap-buffer-underflow",
    [HEAP_USE_AFTER_FREE] = "heap-use-after-free",
    [HEAP_DAMAGED_HEADER] = "heap-metadata-damaged",
};

const char *heap_error_name(enum heap_error kind)
{
    return kind_names[kind];
}

static int open_destination(void)
{
    const struct options *options = &heap.options;
    if (options->report[0] == '\0')
        return STDERR_FILENO;
    /* Appended: a run may find several errors before it ends. Never a
     * FIFO or a device: the open must not wait inside free(). */
    int fd = report_file_open(options->report, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
                              O_CLOEXEC, 1);
    return fd >= 0 ? fd : STDERR_FILENO;
}

void heap_report_signed(struct text_out *out, long value)
{
    if (value < 0) {
        text_out_char(out, '-');
        text_out_decimal(out, (uint64_t)-(value + 1) + 1);
    } else {
        text_out_decimal(out, (uint64_t)value);
    }
}

static void put_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "0x");
    text_out_hex(out, value);
}

void heap_report_stack(struct text_out *out, int fd, const char *title, stack_id id)
{
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    int count = heap_stack_frames(id, &thread, frames, REPORT_FRAMES);
    if (count <= 0)
        return;
    text_out_string(out, "*** ");
    text_out_string(out, title);
    text_out_string(out, " by thread ");
    text_out_decimal(out, thread);
    text_out_string(out, ":\n");
    text_out_end_line(out);
    text_out_flush(out);
    backtrace_print_fd(frames, count, 0, fd);
}

static void text_report(int fd, const struct heap_error_facts *facts, stack_id here)
{
    char buffer[1024];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_string(&out, "*** execinfo_ex: heap error: ");
    text_out_string(&out, kind_names[facts->kind]);
    text_out_string(&out, " at ");
    put_hex(&out, facts->address);
    text_out_string(&out, " (found ");
    text_out_string(&out, facts->found);
    text_out_string(&out, ")\n");
    if (facts->block != 0) {
        text_out_string(&out, "*** block ");
        put_hex(&out, facts->block);
        text_out_string(&out, " of ");
        text_out_decimal(&out, facts->size);
        text_out_string(&out, " bytes; the address is at offset ");
        heap_report_signed(&out, facts->offset);
        text_out_string(&out, facts->offset >= 0 && (size_t)facts->offset >= facts->size
                                  ? " (past its end)\n" : facts->offset < 0
                                  ? " (before its start)\n" : " (inside it)\n");
    }
    text_out_string(&out, "*** pid ");
    text_out_decimal(&out, (uint64_t)getpid());
    text_out_string(&out, ", thread ");
    text_out_decimal(&out, heap_thread_id());
    text_out_string(&out, "\n*** here:\n");
    text_out_end_line(&out);
    text_out_flush(&out);
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    int count = heap_stack_frames(here, &thread, frames, REPORT_FRAMES);
    backtrace_print_fd(frames, count, 0, fd);
    heap_report_stack(&out, fd, "allocated", facts->alloc_stack);
    heap_report_stack(&out, fd, "freed", facts->free_stack);
    text_out_string(&out, "*** end of heap report\n");
    text_out_flush(&out);
}

void heap_report_json_stack(struct text_out *out, int fd, const char *key, stack_id id)
{
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    int count = heap_stack_frames(id, &thread, frames, REPORT_FRAMES);
    json_key(out, key, 0);
    if (count <= 0) {
        text_out_string(out, "null");
        return;
    }
    text_out_string(out, "{\"thread\":");
    text_out_decimal(out, thread);
    text_out_string(out, ",\"frames\":");
    text_out_flush(out);
    backtrace_print_fd(frames, count, BACKTRACE_JSON, fd);
    text_out_char(out, '}');
}

/* The same facts as one JSON object (docs/HEAP_REPORT.md). */
static void json_report(int fd, const struct heap_error_facts *facts, stack_id here)
{
    char buffer[1024];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_char(&out, '{');
    json_key(&out, "format", 1);
    json_string(&out, "execinfo_ex heap report 1");
    json_key(&out, "kind", 0);
    json_string(&out, kind_names[facts->kind]);
    json_key(&out, "address", 0);
    json_hex(&out, facts->address);
    json_key(&out, "found", 0);
    json_string(&out, facts->found);
    json_key(&out, "block", 0);
    if (facts->block != 0) {
        json_hex(&out, facts->block);
        json_key(&out, "size", 0);
        text_out_decimal(&out, facts->size);
        json_key(&out, "offset", 0);
        json_signed(&out, facts->offset);
    } else {
        text_out_string(&out, "null,\"size\":null,\"offset\":null");
    }
    json_key(&out, "pid", 0);
    json_signed(&out, getpid());
    json_key(&out, "tid", 0);
    text_out_decimal(&out, heap_thread_id());
    heap_report_json_stack(&out, fd, "here", here);
    heap_report_json_stack(&out, fd, "allocated", facts->alloc_stack);
    heap_report_json_stack(&out, fd, "freed", facts->free_stack);
    text_out_char(&out, '}');
    text_out_flush(&out);
}

/* The error that is about to abort the program, for the crash report of
 * that abort (heap_report_pending): one report, in one place, instead of a
 * heap report followed by a crash report that could not join it in a
 * report= file. The first error of the process wins. */
static struct heap_error_facts pending;
static stack_id pending_here;
static _Atomic int pending_state;   /* 0 none, 1 being written, 2 ready */

/* Our fatal handler is there to report the abort, with our section. */
static int crash_report_will_follow(void)
{
    struct sigaction action;
    return heap.crash_section_added && sigaction(SIGABRT, NULL, &action) == 0 &&
           (action.sa_flags & SA_SIGINFO) && action.sa_sigaction == heap.fatal_handler;
}

void heap_report_error(const struct heap_error_facts *facts)
{
    heap_busy++;
    mtrace_flush_now(); /* the trace up to the error, whatever follows */
    stack_id here = heap_capture(HEAP_CAPTURE_REPORT);
    if (heap.options.on_error == HEAP_ERROR_ABORT && crash_report_will_follow()) {
        int none = 0;
        if (atomic_compare_exchange_strong(&pending_state, &none, 1)) {
            pending = *facts;
            pending_here = here;
            atomic_store(&pending_state, 2);
        }
        abort();
    }
    int fd = open_destination();
    if (heap.options.format == REPORT_JSON) {
        json_report(fd, facts, here);
        fd_write_all(fd, "\n", 1);
    } else {
        text_report(fd, facts, here);
    }
    if (fd != STDERR_FILENO)
        close(fd);
    heap_busy--;
    if (heap.options.on_error == HEAP_ERROR_ABORT)
        abort();
}

/* Also for another signal: when a crash report of another thread is being
 * written, our abort waits for it and dies; that report carries the error. */
void heap_report_pending(int fd, int format, int signo)
{
    (void)signo;
    if (atomic_load(&pending_state) != 2)
        return;
    if (format == BACKTRACE_REPORT_JSON) {
        const char *member = ",\"heap_error\":";
        fd_write_all(fd, member, strlen(member));
        json_report(fd, &pending, pending_here);
    } else {
        text_report(fd, &pending, pending_here);
    }
}
