/* answer_filter.c: the symbols and units an answer about a few addresses
 * needs (answer_filter.h).
 * World: normal (malloc, libdw).
 *
 * Why the symbols kept give the whole table's answers: lookup.c's
 * find_symbol takes the last symbol starting at or below the address,
 * then searches back at most LOOKUP_ENCLOSING_LIMIT symbols of the
 * finished table (sorted, aliases dropped per start). The symbols at the
 * LOOKUP_ENCLOSING_LIMIT largest distinct starts at or below an address
 * hold every symbol that search can see, and the aliases kept at one
 * start depend on that start's symbols alone. A symbol that falls out of
 * the window of the smallest address at or above it falls out of every
 * larger address's window too, so that address alone decides. */
#define _GNU_SOURCE
#include "answer_filter.h"
#include "symbol_table.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    uint64_t left = *(const uint64_t *)a, right = *(const uint64_t *)b;
    return left < right ? -1 : left > right;
}

int answer_filter_init(struct answer_filter *filter, const uint64_t *addresses, size_t count)
{
    memset(filter, 0, sizeof *filter);
    filter->addresses = malloc((count ? count : 1) * sizeof *filter->addresses);
    filter->windows = calloc(count ? count : 1, sizeof *filter->windows);
    if (filter->addresses == NULL || filter->windows == NULL) {
        answer_filter_free(filter);
        return -ENOMEM;
    }
    memcpy(filter->addresses, addresses, count * sizeof *addresses);
    qsort(filter->addresses, count, sizeof *filter->addresses, by_value);
    for (size_t i = 0; i < count; i++)
        if (filter->count == 0 || filter->addresses[filter->count - 1] != filter->addresses[i])
            filter->addresses[filter->count++] = filter->addresses[i];
    return 0;
}

void answer_filter_free(struct answer_filter *filter)
{
    free(filter->addresses);
    free(filter->windows);
    memset(filter, 0, sizeof *filter);
}

/* The index of the smallest address at or above VALUE; count if none. */
static size_t address_at_or_above(const struct answer_filter *filter, uint64_t value)
{
    size_t low = 0, high = filter->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (filter->addresses[middle] < value)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

static int window_full(const struct answer_window *window)
{
    return window->filled == LOOKUP_ENCLOSING_LIMIT;
}

static uint64_t window_lowest(const struct answer_window *window)
{
    return window->starts[window->filled - 1];
}

/* Whether START is in WINDOW, or would enter it. */
static int window_admits(const struct answer_window *window, uint64_t start)
{
    return !window_full(window) || start >= window_lowest(window);
}

int answer_filter_may_keep(const struct answer_filter *filter, uint64_t start)
{
    size_t at = address_at_or_above(filter, start);
    return at < filter->count && window_admits(&filter->windows[at], start);
}

/* START into WINDOW, descending, the lowest start pushed out when full. */
static void window_insert(struct answer_window *window, uint64_t start)
{
    unsigned at = 0;
    while (at < window->filled && window->starts[at] > start)
        at++;
    if (at < window->filled && window->starts[at] == start)
        return;
    unsigned last = window_full(window) ? window->filled - 1 : window->filled++;
    memmove(&window->starts[at + 1], &window->starts[at], (last - at) * sizeof *window->starts);
    window->starts[at] = start;
}

int answer_filter_note(struct answer_filter *filter, uint64_t start)
{
    size_t at = address_at_or_above(filter, start);
    if (at == filter->count || !window_admits(&filter->windows[at], start))
        return 0;
    window_insert(&filter->windows[at], start);
    return 1;
}

void answer_filter_symbols(const struct answer_filter *filter, struct symbol_vector *symbols)
{
    size_t kept = 0;
    for (size_t i = 0; i < symbols->count; i++)
        if (answer_filter_may_keep(filter, symbols->entries[i].start))
            symbols->entries[kept++] = symbols->entries[i];
    symbols->count = kept;
}

/* Whether an address lies in [LOW, HIGH). */
static int holds_address(const struct answer_filter *filter, uint64_t low, uint64_t high)
{
    size_t at = address_at_or_above(filter, low);
    return at < filter->count && filter->addresses[at] < high;
}

int answer_filter_unit(const struct answer_filter *filter, void *unit)
{
    Dwarf_Addr base, low, high;
    ptrdiff_t offset = 0;
    int ranges = 0;
    while ((offset = dwarf_ranges(unit, offset, &base, &low, &high)) > 0) {
        ranges++;
        if (holds_address(filter, low, high))
            return 1;
    }
    return offset < 0 || ranges == 0; /* unreadable or none given: kept */
}
