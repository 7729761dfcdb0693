/* heap_report.h: the report of a heap error found by the hook layer. */
#ifndef EXECINFO_EX_HEAP_REPORT_H
#define EXECINFO_EX_HEAP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

enum heap_error {
    HEAP_DOUBLE_FREE,
    HEAP_INVALID_FREE,          /* never allocated */
    HEAP_INTERIOR_FREE,         /* inside a block */
    HEAP_OVERFLOW,              /* rear guard damaged */
    HEAP_UNDERFLOW,             /* front guard damaged */
    HEAP_USE_AFTER_FREE,        /* a freed block written to */
    HEAP_DAMAGED_HEADER,        /* the block's own header overwritten */
};

struct heap_error_facts {
    enum heap_error kind;
    uintptr_t address;          /* what was freed, or where the damage is */
    uintptr_t block;            /* the block's user address, 0 if none */
    size_t size;                /* the block's size */
    long offset;                /* address - block (negative: in front) */
    stack_id alloc_stack, free_stack;
    const char *found;          /* "at free", "at quarantine eviction", ... */
};

struct text_out;

/* "*** TITLE by thread N:" and the frames of stack ID, to FD through OUT
 * (flushed first); nothing for an unknown id. Signal-safe. */
void heap_report_stack(struct text_out *out, int fd, const char *title, stack_id id);
void heap_report_signed(struct text_out *out, long value);

/* ,"KEY":{"thread":N,"frames":[...]} or ,"KEY":null. Signal-safe. */
void heap_report_json_stack(struct text_out *out, int fd, const char *key, stack_id id);

/* The kind's name in reports ("double-free"...). */
const char *heap_error_name(enum heap_error kind);

/* Write the report (with the current stack) and then, with on_error=abort,
 * abort. World: signal-safe (text_out, backtrace_print_fd). */
void heap_report_error(const struct heap_error_facts *facts);

/* In the crash report of the SIGABRT that a heap error raised (or of a
 * crash of another thread that report waited for): that error, in the
 * report's FORMAT (text lines, or a ,"heap_error":{...} member). Nothing
 * when no heap error is pending. Signal-safe. */
void heap_report_pending(int fd, int format, int signo);

#endif
