/* fault_access_words.c: the fault access in words, one way for every
 * report that says it: the crash report's headline and JSON, and the
 * heap report of a guard page's fault (the hooks library links its own
 * copy, as it does the base modules).
 * World: signal-safe (text_out, json_out). */
#include "fault_access.h"
#include "../base/json_out.h"
#include "../base/text_out.h"

int fault_access_known(const struct fault_access *access)
{
    return access->direction != FAULT_ACCESS_UNKNOWN || access->size != 0;
}

void fault_access_text(struct text_out *out, const struct fault_access *access)
{
    const char *direction = fault_access_direction_name(access->direction);
    text_out_string(out, direction != NULL ? direction : "access");
    if (access->direction == FAULT_ACCESS_EXECUTE)
        return;
    if (access->size == 0) {
        text_out_string(out, " of unknown size");
        return;
    }
    text_out_string(out, " of size ");
    text_out_decimal(out, access->size);
}

void fault_access_json(struct text_out *out, const struct fault_access *access)
{
    if (!fault_access_known(access)) {
        text_out_string(out, "null");
        return;
    }
    text_out_char(out, '{');
    json_key(out, "direction", 1);
    json_string(out, fault_access_direction_name(access->direction));
    json_key(out, "size", 0);
    if (access->size != 0)
        json_signed(out, access->size);
    else
        text_out_string(out, "null");
    text_out_char(out, '}');
}
