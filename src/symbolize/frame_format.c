/* frame_format.c: glibc's two line shapes, byte for byte, and the lines
 * of inlined calls that the extended calls write before a frame.
 * World: signal-safe (text_out only).
 *
 * glibc's backtrace_symbols prints the offset with "%#tx" (so an offset of
 * zero is "+0") and the address with "%p" ("(nil)" for NULL);
 * backtrace_symbols_fd always writes "0x" and no space before '['. The
 * readable shape of the extended calls is glibc's symbols shape with the
 * demangled name. */
#include "frame_format.h"

static void put_offset(struct text_out *out, uintptr_t address, uintptr_t base,
                       enum frame_shape shape)
{
    uintptr_t offset = address >= base ? address - base : base - address;

    text_out_char(out, address >= base ? '+' : '-');
    if (offset != 0 || shape == FRAME_SHAPE_FD)
        text_out_string(out, "0x");
    text_out_hex(out, offset);
}

static void put_address(struct text_out *out, uintptr_t address, enum frame_shape shape)
{
    if (address == 0 && shape == FRAME_SHAPE_SYMBOLS) {
        text_out_string(out, "[(nil)]");
        return;
    }
    text_out_string(out, "[0x");
    text_out_hex(out, address);
    text_out_char(out, ']');
}

static void format_symbols_shape(struct text_out *out, uintptr_t address,
                                 const struct frame_location *location, const char *function)
{
    text_out_string(out, location->module_path);
    text_out_char(out, '(');
    if (function != NULL) {
        text_out_string(out, function);
        put_offset(out, address, location->function_address, FRAME_SHAPE_SYMBOLS);
    } else if (location->module_bias != 0) {
        put_offset(out, address, location->module_bias, FRAME_SHAPE_SYMBOLS);
    }
    text_out_string(out, ") ");
}

static void format_fd_shape(struct text_out *out, uintptr_t address,
                            const struct frame_location *location)
{
    text_out_string(out, location->module_path);
    if (location->function == NULL && location->module_bias == 0)
        return;
    text_out_char(out, '(');
    if (location->function != NULL) {
        text_out_string(out, location->function);
        put_offset(out, address, location->function_address, FRAME_SHAPE_FD);
    } else {
        put_offset(out, address, location->module_bias, FRAME_SHAPE_FD);
    }
    text_out_char(out, ')');
}

void frame_format(struct text_out *out, uintptr_t address,
                  const struct frame_location *location, enum frame_shape shape)
{
    if (location->module_path != NULL && location->module_path[0] != '\0') {
        if (shape == FRAME_SHAPE_SYMBOLS)
            format_symbols_shape(out, address, location, location->function);
        else if (shape == FRAME_SHAPE_READABLE)
            format_symbols_shape(out, address, location, location->function_demangled);
        else
            format_fd_shape(out, address, location);
    }
    put_address(out, address, shape == FRAME_SHAPE_FD ? FRAME_SHAPE_FD : FRAME_SHAPE_SYMBOLS);
}

void frame_format_source(struct text_out *out, const struct frame_location *location)
{
    if (location->file == NULL || location->line == 0)
        return;
    text_out_string(out, " at ");
    text_out_string(out, location->file);
    text_out_char(out, ':');
    text_out_decimal(out, location->line);
}

void frame_format_inlined(struct text_out *out, const struct frame_location *location,
                          const char *prefix)
{
    struct inlined_frame inlined;
    for (unsigned i = 0; lookup_inlined(location, i, &inlined) && out->error == 0; i++) {
        text_out_string(out, prefix);
        text_out_string(out, "inlined: ");
        text_out_string(out, inlined.function != NULL ? inlined.function : "??");
        if (inlined.file != NULL && inlined.line != 0) {
            text_out_string(out, " at ");
            text_out_string(out, inlined.file);
            text_out_char(out, ':');
            text_out_decimal(out, inlined.line);
        }
        text_out_char(out, '\n');
        text_out_end_line(out);
    }
}
