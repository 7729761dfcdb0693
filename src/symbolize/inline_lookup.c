/* inline_lookup.c: the chain of inlined calls at an address, from the
 * index's sorted ranges (src/symbolize/inline_table.c builds them).
 * World: signal-safe (binary search over immutable mmap'd arrays).
 *
 * A chain is walked up through parent indexes, each lower than its
 * call's, so a walk always ends: checked here at each step (a cache file
 * mapped at its first use is not checked whole, index_cache_deferred.c),
 * as each call a range names and each string. */
#include "lookup.h"

/* The innermost inlined call at ADDRESS, or INDEX_INLINE_NONE. */
static uint32_t innermost_call(const struct module_data *data, uint64_t address)
{
    size_t low = 0, high = data->inline_range_count;

    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (data->inline_ranges[middle].from <= address)
            low = middle + 1;
        else
            high = middle;
    }
    uint32_t call = low == 0 ? INDEX_INLINE_NONE : data->inline_ranges[low - 1].call;
    return call < data->inline_count ? call : INDEX_INLINE_NONE;
}

static const char *string_at(const struct module_data *data, uint32_t offset)
{
    return offset == INDEX_INLINE_NONE ? NULL : index_string(data, offset);
}

/* The call CALL sits in, or INDEX_INLINE_NONE (also for a parent that is
 * not lower than its call). */
static uint32_t parent_of(const struct module_data *data, uint32_t call)
{
    uint32_t parent = data->inlines[call].parent;
    return parent < call ? parent : INDEX_INLINE_NONE;
}

/* The call INDEX steps up from the innermost, or INDEX_INLINE_NONE. */
static uint32_t call_at(const struct frame_location *location, unsigned index)
{
    uint32_t call = location->inline_call;
    for (unsigned i = 0; i < index && call != INDEX_INLINE_NONE; i++)
        call = parent_of(location->inline_data, call);
    return call;
}

void lookup_inline_chain(const struct module_data *data, uint64_t address,
                         struct frame_location *location)
{
    location->inline_data = data;
    location->inline_call = data->inline_range_count ? innermost_call(data, address)
                                                     : INDEX_INLINE_NONE;
    location->inner_file = location->file;
    location->inner_line = location->line;
    if (location->inline_call == INDEX_INLINE_NONE)
        return;
    /* The real frame's line is where the outermost call was made. */
    uint32_t call = location->inline_call;
    for (unsigned depth = 1; depth < LOOKUP_INLINED_MAX; depth++) {
        uint32_t parent = parent_of(data, call);
        if (parent == INDEX_INLINE_NONE)
            break;
        call = parent;
    }
    location->file = string_at(data, data->inlines[call].call_file);
    location->line = data->inlines[call].call_line;
}

int lookup_inlined(const struct frame_location *location, unsigned index,
                   struct inlined_frame *out)
{
    if (location->resolved_inlined != NULL) {
        if (index >= location->resolved_inlined_count)
            return 0;
        *out = location->resolved_inlined[index];
        return 1;
    }
    if (location->inline_data == NULL || location->inline_call == INDEX_INLINE_NONE ||
        index >= LOOKUP_INLINED_MAX)
        return 0;
    uint32_t call = call_at(location, index);
    if (call == INDEX_INLINE_NONE)
        return 0;
    const struct module_data *data = location->inline_data;
    out->function = string_at(data, data->inlines[call].name);
    if (index == 0) {
        out->file = location->inner_file;
        out->line = location->inner_line;
    } else {
        /* Its line is where the call inside it was made. */
        uint32_t inner = call_at(location, index - 1);
        out->file = string_at(data, data->inlines[inner].call_file);
        out->line = data->inlines[inner].call_line;
    }
    return 1;
}
