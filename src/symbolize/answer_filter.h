/* answer_filter.h: what of a module an answer about a few addresses
 * needs (the second stage, tools/symbolize/): the symbols the lookup can
 * reach from them, the compilation units whose code holds them. A module
 * read through a filter answers about those addresses as the whole
 * module would (lookup.c), and about no other. */
#ifndef EXECINFO_EX_ANSWER_FILTER_H
#define EXECINFO_EX_ANSWER_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "lookup.h"

struct symbol_vector;

/* Per address, the largest distinct symbol starts at or below it seen so
 * far, in descending order: the lookup searches that far back. */
struct answer_window {
    uint64_t starts[LOOKUP_ENCLOSING_LIMIT];
    unsigned filled;
};

struct answer_filter {
    uint64_t *addresses;          /* link-time, sorted, distinct */
    size_t count;
    struct answer_window *windows; /* one per address */
};

/* The filter for ADDRESSES (link-time, any order, repeats allowed).
 * Returns 0 or -ENOMEM. Normal world. */
int answer_filter_init(struct answer_filter *filter, const uint64_t *addresses, size_t count);
void answer_filter_free(struct answer_filter *filter);

/* Whether a symbol starting at START can still be one the lookup reaches
 * (cheap: before the symbol is looked at further). */
int answer_filter_may_keep(const struct answer_filter *filter, uint64_t start);

/* Note a symbol (one the whole table would hold) starting at START.
 * Returns 1 when it is to be kept for now, 0 when no address needs it. */
int answer_filter_note(struct answer_filter *filter, uint64_t start);

/* Once every symbol is noted: drop from SYMBOLS those that fell out of
 * their address's window since. */
void answer_filter_symbols(const struct answer_filter *filter, struct symbol_vector *symbols);

/* Whether the compilation unit UNIT (a Dwarf_Die) holds code at one of
 * the addresses; a unit whose ranges cannot be read is kept. */
int answer_filter_unit(const struct answer_filter *filter, void *unit);

#endif
