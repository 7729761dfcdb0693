/* frame_format.h: one frame as glibc writes it. */
#ifndef EXECINFO_EX_FRAME_FORMAT_H
#define EXECINFO_EX_FRAME_FORMAT_H

#include <stdint.h>

#include "../base/text_out.h"
#include "lookup.h"

enum frame_shape {
    FRAME_SHAPE_SYMBOLS,  /* backtrace_symbols: "path(fn+0x1a) [0xaddr]" */
    FRAME_SHAPE_FD,       /* backtrace_symbols_fd: "path(fn+0x1a)[0xaddr]" */
    FRAME_SHAPE_READABLE, /* the symbols shape with the demangled name: print_trace,
                             backtrace_print_fd, the crash report */
};

/* The frame, without a line end. Signal-safe. */
void frame_format(struct text_out *out, uintptr_t address,
                  const struct frame_location *location, enum frame_shape shape);

/* " at file:line" when the location has one, else nothing. Signal-safe. */
void frame_format_source(struct text_out *out, const struct frame_location *location);

/* One line per inlined call of LOCATION, innermost first, each ended:
 * "PREFIXinlined: function at file:line" ("??" for a function without a
 * name, no " at" without a line). Written before the frame's own line,
 * which then has the outermost call's line. PREFIX: the frame's own
 * "#N  " where frames are numbered (the crash report: the lines read as
 * part of frame N, not of the frame above them), else four spaces.
 * Signal-safe. */
void frame_format_inlined(struct text_out *out, const struct frame_location *location,
                          const char *prefix);

#endif
