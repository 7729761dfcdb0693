/* symbols_fd.c: backtrace_symbols_fd, print_trace and friends.
 * World: signal-safe (stack buffers, the lock-free index, raw write). */
#include "execinfo_ex.h"
#include "cold_frame_names.h"
#include "frame_format.h"
#include "frame_json.h"
#include "lookup.h"
#include "../base/text_out.h"
#include "../unwind/capture.h"

#include <errno.h>
#include <stdint.h>

/* Stack is scarce in a handler on an alternate stack (docs/SIGNAL_SAFETY.md):
 * a line longer than the buffer is written in pieces. */
#define OUTPUT_BUFFER_SIZE 1024
#define PRINT_TRACE_FRAMES 64

_Static_assert(LOOKUP_FIRST_EXACT == BACKTRACE_FIRST_IS_PC, "one flag, two names");

/* EXACT and FLAGS say which frames are exact pcs (lookup_frame_is_exact).
 * Frames of modules the index has not read (the library only preloaded,
 * a cold cache) are named from their files' symbol tables. */
static void format_frames(struct text_out *out, void *const *buffer, const unsigned char *exact,
                          int size, int flags, enum frame_shape shape, int with_source)
{
    struct frame_location location;
    const struct index_snapshot *snapshot = index_acquire();
    const struct resolved_names *cold = cold_frame_names(snapshot, buffer, exact, size, flags);
    for (int i = 0; i < size && out->error == 0; i++) {
        uintptr_t address = (uintptr_t)buffer[i];
        uintptr_t naming = lookup_naming_address(address, lookup_frame_is_exact(exact, flags, i));
        if (cold != NULL)
            resolved_lookup_frame(snapshot, cold, address, naming, &location);
        else
            lookup_frame(snapshot, address, naming, with_source, &location);
        if (with_source)
            frame_format_inlined(out, &location, "    ");
        frame_format(out, address, &location, shape);
        if (with_source)
            frame_format_source(out, &location);
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
    cold_frame_names_done(cold);
    index_release();
}

static void write_frames(void *const *buffer, int size, int flags, int fd,
                         enum frame_shape shape, int with_source)
{
    char storage[OUTPUT_BUFFER_SIZE];
    struct text_out out;

    text_out_init_fd(&out, fd, storage, sizeof storage);
    format_frames(&out, buffer, NULL, size, flags, shape, with_source);
    text_out_flush(&out);
}

__attribute__((visibility("default")))
void backtrace_symbols_fd(void *const *buffer, int size, int fd)
{
    int saved_errno = errno;
    if (buffer != NULL && size > 0)
        /* Bare addresses, named exactly, as glibc's dladdr names them. */
        write_frames(buffer, size, LOOKUP_ALL_EXACT, fd, FRAME_SHAPE_FD, 0);
    errno = saved_errno;
}

static void write_json_frames(void *const *buffer, int size, int flags, int fd)
{
    char storage[OUTPUT_BUFFER_SIZE];
    struct text_out out;

    text_out_init_fd(&out, fd, storage, sizeof storage);
    const struct index_snapshot *snapshot = index_acquire();
    frame_json_array(&out, snapshot, buffer, NULL, size, flags & BACKTRACE_FIRST_IS_PC);
    index_release();
    text_out_flush(&out);
}

__attribute__((visibility("default")))
void backtrace_print_fd(void *const *buffer, int size, int flags, int fd)
{
    int saved_errno = errno;
    if (flags & BACKTRACE_JSON)
        write_json_frames(buffer, buffer != NULL && size > 0 ? size : 0, flags, fd);
    else if (buffer != NULL && size > 0)
        write_frames(buffer, size, flags, fd, FRAME_SHAPE_READABLE, 1);
    errno = saved_errno;
}

/* noinline: frame 0 of the capture must be this function, which is skipped. */
__attribute__((noinline))
static void print_caller_trace(int fd)
{
    void *frames[PRINT_TRACE_FRAMES + 2];
    unsigned char exact[PRINT_TRACE_FRAMES + 2];
    char storage[OUTPUT_BUFFER_SIZE];
    struct text_out out;
    int saved_errno = errno;
    int count = capture_backtrace_kinds(frames, exact, PRINT_TRACE_FRAMES + 2);
    /* Skip this function and the public entry point that called it. */
    int skip = count < 2 ? count : 2;

    text_out_init_fd(&out, fd, storage, sizeof storage);
    text_out_string(&out, "Obtained ");
    text_out_decimal(&out, (uint64_t)(count - skip));
    text_out_string(&out, " stack frames.\n");
    text_out_end_line(&out);
    format_frames(&out, frames + skip, exact + skip, count - skip, 0, FRAME_SHAPE_READABLE, 1);
    text_out_flush(&out);
    errno = saved_errno;
}

__attribute__((visibility("default"), noinline))
void print_trace_fd(int fd)
{
    print_caller_trace(fd);
    __asm__ volatile("" ::: "memory"); /* keep this frame: no tail call */
}

__attribute__((visibility("default"), noinline))
void print_trace(void)
{
    print_caller_trace(2);
    __asm__ volatile("" ::: "memory");
}
