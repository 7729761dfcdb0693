/* heap_report.h: the report of a heap error found by the hook layer.
 *
 * Each report kind has one facts struct, filled once, and two renderers
 * over it (text and JSON), so that the two formats cannot say different
 * things: a heap error (here), and a block the heap scans name
 * (heap_inspect.c). */
#ifndef EXECINFO_EX_HEAP_REPORT_H
#define EXECINFO_EX_HEAP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"
#include "../fatal/fault_access.h"

enum heap_error {
    HEAP_DOUBLE_FREE,
    HEAP_INVALID_FREE,          /* never allocated */
    HEAP_INTERIOR_FREE,         /* inside a block */
    HEAP_OVERFLOW,              /* rear guard damaged */
    HEAP_UNDERFLOW,             /* front guard damaged */
    HEAP_USE_AFTER_FREE,        /* a freed block written to */
    HEAP_DAMAGED_HEADER,        /* the block's own header overwritten */
};

/* The bad access itself, where something saw it happen (a guard page's
 * fault, guard_fault.c): what it did, from the fault's decoding, and its
 * stack from the fault's context, without the hooks library's frames;
 * frames[0] is the faulting instruction itself when first_is_pc (0 when
 * that was one of ours, dropped). */
#define HEAP_ACCESS_FRAMES 64
struct heap_access {
    struct fault_access what;
    void *frames[HEAP_ACCESS_FRAMES];
    int count;
    int first_is_pc;
};

struct heap_error_facts {
    enum heap_error kind;
    uintptr_t address;          /* what was freed, or where the damage is */
    uintptr_t block;            /* the block's user address, 0 if none */
    int size_known;             /* 0: the header that held the size is damaged */
    size_t size;                /* the block's size, if known */
    long offset;                /* address - block (negative: in front) */
    stack_id alloc_stack, free_stack;
    const char *found;          /* "at the access", "at free", "at realloc",
                                   "at quarantine eviction", "at exit" */
    const char *region;         /* not a heap block at all: "stack", "module"; or NULL */
    const char *module;         /* for "module": its path ("" for the main program) */
    /* NULL when only the access's damage was found, later. */
    const struct heap_access *access;
    /* Filled by heap_report_error: */
    stack_id here;              /* the stack that found it */
    uint32_t pid, tid;
};

struct text_out;

/* "*** TITLE by thread N:" and the frames of stack ID, to FD through OUT
 * (flushed first); nothing for an unknown id. Signal-safe. */
void heap_report_stack(struct text_out *out, int fd, const char *title, stack_id id);
void heap_report_signed(struct text_out *out, long value);
void heap_report_hex(struct text_out *out, uintptr_t value);

/* The frames of stack ID without this library's own (by its text range,
 * found once at init): no heap report shows the hooks' frames. Signal-safe. */
int heap_report_frames(stack_id id, uint32_t *thread, void **frames, int capacity);

/* FRAMES[0..COUNT) without this library's own, kept in order; returns how
 * many are left. Signal-safe. */
int heap_report_drop_own(void **frames, int count);

/* 1 when the error was found at a call of the program's (free, realloc):
 * the stack that found it is then that call's. 0 for a check at
 * eviction or at exit, whose stack shows only the checker. */
int heap_report_found_at_call(const struct heap_error_facts *facts);

/* "KIND FILE:LINE in FUNCTION" for the report's SUMMARY line, into BUFFER
 * (src/hooks/heap_summary.c). Signal-safe. */
void heap_summary(char *buffer, size_t size, const struct heap_error_facts *facts);

/* ,"KEY":{"thread":N,"frames":[...]} or ,"KEY":null. Signal-safe. */
void heap_report_json_stack(struct text_out *out, int fd, const char *key, stack_id id);

/* The kind's name in reports ("double-free"...). */
const char *heap_error_name(enum heap_error kind);

/* The two renderers of a heap error's facts (docs/HEAP_REPORT.md).
 * Signal-safe. */
void heap_error_text(int fd, const struct heap_error_facts *facts);
void heap_error_json(int fd, const struct heap_error_facts *facts);

/* Where a report that stands alone goes: stderr, or report= opened for
 * appending (if that file is ours; else stderr). Close it unless it is
 * STDERR_FILENO. Signal-safe. */
int heap_report_open(void);

/* Write FACTS on their own, in the format of the options, to stderr or
 * appended to report= (if that file is ours). Signal-safe. */
void heap_report_write(const struct heap_error_facts *facts);

/* Keep FACTS for the crash report of the abort that follows; the first
 * error wins until a crash report has carried it. Signal-safe. */
void heap_report_hold(const struct heap_error_facts *facts);

/* How many heap errors were reported so far (error_exitcode=). */
extern _Atomic unsigned long heap_errors_reported;

/* Capture the stack that found the error, then write or hold the report
 * and, with on_error=abort, abort. World: normal (it runs inside free,
 * realloc or at exit: it captures a stack, flushes the mtrace buffer;
 * src/hooks/heap_report_error.c). */
void heap_report_error(const struct heap_error_facts *facts);

/* In the crash report of the SIGABRT that a heap error raised (or of a
 * crash of another thread that report waited for): that error, in the
 * report's FORMAT (text lines, or a ,"heap_error":{...} member), once:
 * the error is then no longer pending, so a program that recovers from
 * the abort does not see it again in its next crash report. Nothing when
 * no heap error is pending. Returns 1 when it wrote one, with *BLOCK the
 * block it named (0 if none), which the guard scan then leaves out. Signal-safe. */
int heap_report_pending(int fd, int format, int signo, uintptr_t *block);

#endif
