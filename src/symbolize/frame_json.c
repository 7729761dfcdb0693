/* frame_json.c: one JSON object per frame.
 * World: signal-safe (lookups in the published index, text_out). */
#include "frame_json.h"
#include "lookup.h"
#include "../base/json_out.h"

static void put_line(struct text_out *out, unsigned line)
{
    if (line > 0)
        text_out_decimal(out, line);
    else
        text_out_string(out, "null");
}

/* "inlined":[{"function":...,"file":...,"line":...},...], innermost
 * first; left out when the frame holds no inlined call (inlines=0 then
 * writes what it always wrote). */
static void inlined_member(struct text_out *out, const struct frame_location *location)
{
    struct inlined_frame inlined;
    for (unsigned i = 0; lookup_inlined(location, i, &inlined); i++) {
        text_out_string(out, i == 0 ? ",\"inlined\":[{" : ",{");
        json_key(out, "function", 1);
        json_string(out, inlined.function);
        json_key(out, "file", 0);
        json_string(out, inlined.file);
        json_key(out, "line", 0);
        put_line(out, inlined.file != NULL ? inlined.line : 0);
        text_out_char(out, '}');
    }
    if (lookup_inlined(location, 0, &inlined))
        text_out_char(out, ']');
}

static void frame_members(struct text_out *out, const struct index_snapshot *snapshot,
                          const struct resolved_names *resolved, uintptr_t address, int exact)
{
    struct frame_location location;
    resolved_lookup_frame(snapshot, resolved, address, lookup_naming_address(address, exact),
                          &location);
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
    put_line(out, location.file != NULL ? location.line : 0);
    inlined_member(out, &location);
}

void frame_json_array(struct text_out *out, const struct index_snapshot *snapshot,
                      void *const *frames, const unsigned char *exact, int count, int flags)
{
    frame_json_array_resolved(out, snapshot, NULL, frames, exact, count, flags);
}

void frame_json_array_resolved(struct text_out *out, const struct index_snapshot *snapshot,
                               const struct resolved_names *resolved, void *const *frames,
                               const unsigned char *exact, int count, int flags)
{
    text_out_char(out, '[');
    for (int i = 0; i < count; i++) {
        text_out_string(out, i == 0 ? "{" : ",{");
        frame_members(out, snapshot, resolved, (uintptr_t)frames[i],
                      lookup_frame_is_exact(exact, flags, i));
        text_out_char(out, '}');
        text_out_end_line(out);
    }
    text_out_char(out, ']');
}
