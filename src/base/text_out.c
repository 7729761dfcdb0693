/* text_out.c: buffered text building and number formatting.
 * World: signal-safe (no malloc, no stdio, no locale; only fd_write_all). */
#include "text_out.h"
#include "fd_write.h"

#include <string.h>

void text_out_init_fd(struct text_out *out, int fd, char *buffer, size_t capacity)
{
    out->buffer = buffer;
    out->capacity = capacity;
    out->length = 0;
    out->line_start = 0;
    out->total = 0;
    out->fd = fd;
    out->error = 0;
    out->fallback_fd = -1;
    out->fallback_notice = NULL;
    out->fallback_context = NULL;
}

void text_out_set_fallback(struct text_out *out, int fd,
                           void (*notice)(int fd, int error, const void *context),
                           const void *context)
{
    out->fallback_fd = fd;
    out->fallback_notice = notice;
    out->fallback_context = context;
}

void text_out_init_buffer(struct text_out *out, char *buffer, size_t capacity)
{
    text_out_init_fd(out, -1, buffer, capacity);
}

/* The text whose write failed goes to the fallback whole (some of it may
 * have reached the first fd): a line may be repeated, never lost. */
static void fall_back(struct text_out *out, size_t count)
{
    int fd = out->fallback_fd;
    out->fallback_fd = -1;
    if (out->fallback_notice != NULL)
        out->fallback_notice(fd, out->error, out->fallback_context);
    out->fd = fd;
    out->error = fd_write_all(fd, out->buffer, count);
}

static void write_out(struct text_out *out, size_t count)
{
    if (out->error == 0 && count > 0) {
        out->error = fd_write_all(out->fd, out->buffer, count);
        if (out->error != 0 && out->fallback_fd >= 0 && out->fallback_fd != out->fd)
            fall_back(out, count);
    }
    memmove(out->buffer, out->buffer + count, out->length - count);
    out->length -= count;
    /* A line longer than the buffer is written in pieces: what is left
     * of it then starts the buffer. */
    out->line_start = out->line_start > count ? out->line_start - count : 0;
}

/* Make room: write the finished lines, or everything if one line alone
 * fills the buffer. */
static void make_room(struct text_out *out)
{
    if (out->line_start > 0)
        write_out(out, out->line_start);
    else
        write_out(out, out->length);
}

void text_out_bytes(struct text_out *out, const char *data, size_t length)
{
    out->total += length;
    while (length > 0) {
        size_t room = out->capacity - out->length;
        if (room == 0) {
            if (out->fd < 0 || out->capacity == 0)
                return;
            make_room(out);
            continue;
        }
        size_t chunk = length < room ? length : room;
        memcpy(out->buffer + out->length, data, chunk);
        out->length += chunk;
        data += chunk;
        length -= chunk;
    }
}

void text_out_string(struct text_out *out, const char *text)
{
    text_out_bytes(out, text, strlen(text));
}

void text_out_char(struct text_out *out, char c)
{
    text_out_bytes(out, &c, 1);
}

size_t format_unsigned(char *digits, uint64_t value, unsigned base)
{
    static const char alphabet[] = "0123456789abcdef";
    char reversed[64];
    size_t count = 0;

    do {
        reversed[count++] = alphabet[value % base];
        value /= base;
    } while (value != 0);
    for (size_t i = 0; i < count; i++)
        digits[i] = reversed[count - 1 - i];
    digits[count] = '\0';
    return count;
}

/* Shifts, not divisions: hexadecimal is most of what a trace prints. */
void text_out_hex(struct text_out *out, uintptr_t value)
{
    static const char alphabet[] = "0123456789abcdef";
    char digits[2 * sizeof value];
    size_t at = sizeof digits;

    do {
        digits[--at] = alphabet[value & 0xf];
        value >>= 4;
    } while (value != 0);
    text_out_bytes(out, digits + at, sizeof digits - at);
}

void text_out_decimal(struct text_out *out, uint64_t value)
{
    char digits[65];
    text_out_bytes(out, digits, format_unsigned(digits, value, 10));
}

void text_out_end_line(struct text_out *out)
{
    out->line_start = out->length;
}

int text_out_flush(struct text_out *out)
{
    if (out->fd >= 0) {
        out->line_start = out->length;
        write_out(out, out->length);
    }
    return out->error;
}
