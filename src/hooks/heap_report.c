/* heap_report.c: write a heap error with the stacks that explain it.
 * World: signal-safe: it runs inside free() with the heap possibly
 * damaged, and in the crash handler for a held error, so it uses only the
 * stack buffer writer, the depot and the core library's AS-Safe printing.
 * What found the error and captured its stack is heap_report_error.c.
 *
 * Text, one block of lines between "*** execinfo_ex: heap error" and
 * "*** end of heap report", or one JSON object with format=json
 * (docs/HEAP_REPORT.md): two renderers of one facts struct. */
#define _GNU_SOURCE
#include "heap_report.h"
#include "heap.h"
#include "../base/fd_write.h"
#include "../base/json_out.h"
#include "../base/report_file.h"
#include "../base/text_out.h"
#include "execinfo_ex.h"

#include <fcntl.h>
#include <stdatomic.h>
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

int heap_report_open(void)
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

void heap_report_hex(struct text_out *out, uintptr_t value)
{
    text_out_string(out, "0x");
    text_out_hex(out, value);
}

int heap_report_drop_own(void **frames, int count)
{
    if (heap.own_end <= heap.own_start)
        return count;
    int kept = 0;
    for (int i = 0; i < count; i++) {
        uintptr_t address = (uintptr_t)frames[i];
        if (address < heap.own_start || address >= heap.own_end)
            frames[kept++] = frames[i];
    }
    return kept;
}

/* A stack taken inside the hooks (the one that found an error, or one of
 * an older capture) may hold our own frames; the person reading the
 * report wants the program's. */
int heap_report_frames(stack_id id, uint32_t *thread, void **frames, int capacity)
{
    int count = heap_stack_frames(id, thread, frames, capacity);
    return count <= 0 ? count : heap_report_drop_own(frames, count);
}

int heap_report_found_at_call(const struct heap_error_facts *facts)
{
    return facts->access == NULL && strcmp(facts->found, "at exit") != 0 &&
           strcmp(facts->found, "at quarantine eviction") != 0;
}

void heap_report_stack(struct text_out *out, int fd, const char *title, stack_id id)
{
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    int count = heap_report_frames(id, &thread, frames, REPORT_FRAMES);
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

/* "*** access by thread N:" and the access's frames, the faulting
 * instruction's line looked up exactly. */
static void text_access_stack(struct text_out *out, int fd, const struct heap_error_facts *facts)
{
    const struct heap_access *access = facts->access;
    if (access->count <= 0)
        return;
    text_out_string(out, "*** access by thread ");
    text_out_decimal(out, facts->tid);
    text_out_string(out, ":\n");
    text_out_end_line(out);
    text_out_flush(out);
    backtrace_print_fd(access->frames, access->count,
                       access->first_is_pc ? BACKTRACE_FIRST_IS_PC : 0, fd);
}

static const char *where_in_block(const struct heap_error_facts *facts)
{
    if (facts->offset < 0)
        return " (before its start)\n";
    return (size_t)facts->offset >= facts->size ? " (past its end)\n" : " (inside it)\n";
}

static void text_region(struct text_out *out, const struct heap_error_facts *facts)
{
    if (facts->region == NULL)
        return;
    if (facts->region[0] == 's') {
        text_out_string(out, "*** not a heap block: the address is in the calling thread's stack\n");
    } else {
        text_out_string(out, "*** not a heap block: the address is in the image of ");
        text_out_string(out, facts->module != NULL && facts->module[0] != '\0' ? facts->module
                                                                              : "the main program");
        text_out_string(out, "\n");
    }
}

/* An error found by a check, not at the access: said in words, as the
 * check's own stack (the exit path, an unrelated free) would mislead. */
static void text_found_in_words(struct text_out *out, const struct heap_error_facts *facts)
{
    if (facts->access != NULL || heap_report_found_at_call(facts))
        return;
    if (strcmp(facts->found, "at exit") == 0)
        text_out_string(out, "*** found at exit, by the check of every block: the bad write came "
                             "earlier, where no stack was taken\n");
    else
        text_out_string(out, "*** found when the block left the quarantine: the bad write came "
                             "between its free and then, where no stack was taken\n");
}

static void text_block(struct text_out *out, const struct heap_error_facts *facts)
{
    if (facts->block == 0)
        return;
    text_out_string(out, "*** block ");
    heap_report_hex(out, facts->block);
    if (facts->size_known) {
        text_out_string(out, " of ");
        text_out_decimal(out, facts->size);
        text_out_string(out, " bytes; the address is at offset ");
        heap_report_signed(out, facts->offset);
        text_out_string(out, where_in_block(facts));
    } else {
        text_out_string(out, " of unknown size (its header is damaged); the address is at "
                             "offset ");
        heap_report_signed(out, facts->offset);
        text_out_string(out, "\n");
    }
}

/* The order of ASan's report (docs/HEAP_REPORT.md): the headline, where
 * it happened, then the block's history newest first, then one SUMMARY
 * line. */
void heap_error_text(int fd, const struct heap_error_facts *facts)
{
    char buffer[1024];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_string(&out, "*** execinfo_ex: heap error: ");
    text_out_string(&out, kind_names[facts->kind]);
    text_out_string(&out, " at ");
    heap_report_hex(&out, facts->address);
    text_out_string(&out, " (found ");
    text_out_string(&out, facts->found);
    text_out_string(&out, ")\n");
    if (facts->access != NULL && fault_access_known(&facts->access->what)) {
        text_out_string(&out, "*** ");
        fault_access_text(&out, &facts->access->what);
        text_out_string(&out, "\n");
    }
    text_found_in_words(&out, facts);
    text_block(&out, facts);
    text_region(&out, facts);
    text_out_string(&out, "*** pid ");
    text_out_decimal(&out, facts->pid);
    text_out_string(&out, ", thread ");
    text_out_decimal(&out, facts->tid);
    text_out_string(&out, "\n");
    if (facts->access != NULL) {
        text_access_stack(&out, fd, facts);
    } else if (heap_report_found_at_call(facts)) {
        text_out_string(&out, "*** here:\n");
        text_out_end_line(&out);
        text_out_flush(&out);
        void *frames[REPORT_FRAMES];
        uint32_t thread;
        int count = heap_report_frames(facts->here, &thread, frames, REPORT_FRAMES);
        backtrace_print_fd(frames, count, 0, fd);
    }
    heap_report_stack(&out, fd, "freed", facts->free_stack);
    heap_report_stack(&out, fd, "allocated", facts->alloc_stack);
    char summary[512];
    heap_summary(summary, sizeof summary, facts);
    text_out_string(&out, "SUMMARY: execinfo_ex: ");
    text_out_string(&out, summary);
    text_out_string(&out, "\n*** end of heap report\n");
    text_out_flush(&out);
}

void heap_report_json_stack(struct text_out *out, int fd, const char *key, stack_id id)
{
    void *frames[REPORT_FRAMES];
    uint32_t thread;
    int count = heap_report_frames(id, &thread, frames, REPORT_FRAMES);
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

/* ,"access_stack":{"thread":N,"frames":[...]} or null. */
static void json_access_stack(struct text_out *out, int fd, const struct heap_error_facts *facts)
{
    const struct heap_access *access = facts->access;
    json_key(out, "access_stack", 0);
    if (access == NULL || access->count <= 0) {
        text_out_string(out, "null");
        return;
    }
    text_out_string(out, "{\"thread\":");
    text_out_decimal(out, facts->tid);
    text_out_string(out, ",\"frames\":");
    text_out_flush(out);
    backtrace_print_fd(access->frames, access->count,
                       BACKTRACE_JSON | (access->first_is_pc ? BACKTRACE_FIRST_IS_PC : 0), fd);
    text_out_char(out, '}');
}

/* The same facts as one JSON object (docs/HEAP_REPORT.md). */
void heap_error_json(int fd, const struct heap_error_facts *facts)
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
        if (facts->size_known)
            text_out_decimal(&out, facts->size);
        else
            text_out_string(&out, "null");
        json_key(&out, "offset", 0);
        json_signed(&out, facts->offset);
    } else {
        text_out_string(&out, "null,\"size\":null,\"offset\":null");
    }
    json_key(&out, "region", 0);
    if (facts->region != NULL)
        json_string(&out, facts->region);
    else
        text_out_string(&out, "null");
    json_key(&out, "module", 0);
    if (facts->region != NULL && facts->module != NULL)
        json_string(&out, facts->module);
    else
        text_out_string(&out, "null");
    json_key(&out, "pid", 0);
    text_out_decimal(&out, facts->pid);
    json_key(&out, "tid", 0);
    text_out_decimal(&out, facts->tid);
    json_key(&out, "access", 0);
    if (facts->access != NULL)
        fault_access_json(&out, &facts->access->what);
    else
        text_out_string(&out, "null");
    json_access_stack(&out, fd, facts);
    /* The checker's own stack (the exit path) is no one's: null. */
    heap_report_json_stack(&out, fd, "here",
                           heap_report_found_at_call(facts) ? facts->here : 0);
    heap_report_json_stack(&out, fd, "freed", facts->free_stack);
    heap_report_json_stack(&out, fd, "allocated", facts->alloc_stack);
    char summary[512];
    heap_summary(summary, sizeof summary, facts);
    json_key(&out, "summary", 0);
    json_string(&out, summary);
    text_out_char(&out, '}');
    text_out_flush(&out);
}

void heap_report_write(const struct heap_error_facts *facts)
{
    int fd = heap_report_open();
    if (heap.options.format == REPORT_JSON) {
        heap_error_json(fd, facts);
        fd_write_all(fd, "\n", 1);
    } else {
        heap_error_text(fd, facts);
    }
    if (fd != STDERR_FILENO)
        close(fd);
}

/* The error that is about to abort the program, for the crash report of
 * that abort (heap_report_pending): one report, in one place, instead of a
 * heap report followed by a crash report that could not join it in a
 * report= file. The first error wins, until a crash report carried it. */
static struct heap_error_facts pending;
static _Atomic int pending_state;   /* 0 none, 1 being written, 2 ready, 3 being reported */

void heap_report_hold(const struct heap_error_facts *facts)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&pending_state, &none, 1)) {
        pending = *facts;
        atomic_store(&pending_state, 2);
    }
}

/* Also for another signal: when a crash report of another thread is being
 * written, our abort waits for it and dies; that report carries the error. */
int heap_report_pending(int fd, int format, int signo, uintptr_t *block)
{
    (void)signo;
    int ready = 2;
    *block = 0;
    if (!atomic_compare_exchange_strong(&pending_state, &ready, 3))
        return 0;
    *block = pending.block;
    if (format == BACKTRACE_REPORT_JSON) {
        const char *member = ",\"heap_error\":";
        fd_write_all(fd, member, strlen(member));
        heap_error_json(fd, &pending);
    } else {
        heap_error_text(fd, &pending);
    }
    /* Reported: a program that recovers from the abort (a SIGABRT
     * handler that jumps out) must not see it in its next crash report. */
    atomic_store(&pending_state, 0);
    return 1;
}
