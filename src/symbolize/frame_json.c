/* frame_json.c: one JSON object per frame.
 * World: signal-safe (lookups in the published index, text_out). */
#include "frame_json.h"
#include "lookup.h"
#include "../base/json_out.h"

static void frame_members(struct text_out *out, const struct index_snapshot *snapshot,
                          uintptr_t address, int exact)
{
    struct frame_location location;
    lookup_frame(snapshot, address, lookup_naming_address(address, exact), 1, &location);
    json_key(out, "address", 1);
    json_hex(out, address);
    json_key(out, "module", 0);
    json_string(out, location.module_path);
    json_key(out, "function", 0);
    json_string(out, location.function_demangled);
    json_key(out, "mangled", 0);
    json_string(out, location.function);
    json_key(out, "offset", 0);
    if (location.function != NULL)
        json_hex(out, address - location.function_address);
    else if (location.module_path != NULL)
        json_hex(out, address - location.module_bias);
    else
        text_out_string(out, "null");
    json_key(out, "file", 0);
    json_string(out, location.file);
    json_key(out, "line", 0);
    if (location.line > 0)
        text_out_decimal(out, location.line);
    else
        text_out_string(out, "null");
}

void frame_json_array(struct text_out *out, const struct index_snapshot *snapshot,
                      void *const *frames, const unsigned char *exact, int count, int flags)
{
    text_out_char(out, '[');
    for (int i = 0; i < count; i++) {
        text_out_string(out, i == 0 ? "{" : ",{");
        frame_members(out, snapshot, (uintptr_t)frames[i], lookup_frame_is_exact(exact, flags, i));
        text_out_char(out, '}');
        text_out_end_line(out);
    }
    text_out_char(out, ']');
}
