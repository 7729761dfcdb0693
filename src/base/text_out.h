/* text_out.h: build text in a caller's buffer, without malloc or stdio.
 *
 * A text_out either feeds an fd (the buffer is flushed at line ends when it
 * fills) or fills a fixed buffer and counts what did not fit, so the same
 * formatting code can size a block, fill it, and write to an fd. */
#ifndef EXECINFO_EX_TEXT_OUT_H
#define EXECINFO_EX_TEXT_OUT_H

#include <stddef.h>
#include <stdint.h>

struct text_out {
    char *buffer;
    size_t capacity;
    size_t length;      /* bytes in buffer */
    size_t line_start;  /* where the current, unfinished line begins */
    size_t total;       /* bytes produced, including those that did not fit */
    int fd;             /* -1: counting mode, no flushing */
    int error;          /* first negative errno from the fd, else 0 */
    /* Where the rest goes when a write to fd fails (-1: nowhere), and what
     * tells the reader so first (may be NULL): text_out_set_fallback. */
    int fallback_fd;
    void (*fallback_notice)(int fd, int error, const void *context);
    const void *fallback_context;
};

/* Feed FD through BUFFER; call text_out_flush at the end. */
void text_out_init_fd(struct text_out *out, int fd, char *buffer, size_t capacity);
/* When a write to OUT's fd fails with error E, call NOTICE(FD, E, CONTEXT)
 * (if not NULL), then write to FD instead, from the text whose write
 * failed on: once, so the fd's error is kept only if FD fails too. */
void text_out_set_fallback(struct text_out *out, int fd,
                           void (*notice)(int fd, int error, const void *context),
                           const void *context);
/* Fill BUFFER (may be NULL with CAPACITY 0 to only count). */
void text_out_init_buffer(struct text_out *out, char *buffer, size_t capacity);

void text_out_bytes(struct text_out *out, const char *data, size_t length);
void text_out_string(struct text_out *out, const char *text);
void text_out_char(struct text_out *out, char c);
/* Lowercase hexadecimal without prefix, at least one digit. */
void text_out_hex(struct text_out *out, uintptr_t value);
void text_out_decimal(struct text_out *out, uint64_t value);
/* Mark a line end (after writing '\n' or a NUL): flushing prefers it. */
void text_out_end_line(struct text_out *out);
/* Write what is buffered to the fd. Returns 0 or the first error. */
int text_out_flush(struct text_out *out);

/* Digits of VALUE in BASE (2..16) into DIGITS (>= 65 bytes); returns the
 * count. Exposed for tests and other formatters. */
size_t format_unsigned(char *digits, uint64_t value, unsigned base);

#endif
