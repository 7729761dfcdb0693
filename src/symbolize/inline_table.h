/* inline_table.h: the inlined calls of a module, from its DWARF
 * (DW_TAG_inlined_subroutine), as the signal-safe index stores them. */
#ifndef EXECINFO_EX_INLINE_TABLE_H
#define EXECINFO_EX_INLINE_TABLE_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* No inlined call: a parent, a name or a file that is not there. */
#define INLINE_NONE UINT32_MAX

/* One inlined call. Its parent (the inlined call it sits in) always comes
 * before it, so a walk up the chain ends. */
struct inline_call {
    uint32_t name;       /* a string index (the interner's), or INLINE_NONE */
    uint32_t call_file;  /* a string index, or INLINE_NONE */
    uint32_t call_line;  /* 0: not known */
    uint32_t parent;     /* index in inline_vector.calls, or INLINE_NONE */
};

/* One address range of an inlined call, before flattening. */
struct inline_range {
    uint64_t low, high;  /* link-time, [low, high) */
    uint32_t call;       /* index in inline_vector.calls */
    uint32_t depth;      /* 1: inlined straight into the real function */
};

/* From FROM on (up to the next segment), CALL is the innermost inlined
 * call (INLINE_NONE: none). Sorted by FROM, no two at one address. */
struct inline_segment {
    uint64_t from;
    uint32_t call;
};

struct inline_vector {
    struct inline_call *calls;
    size_t call_count, call_capacity;
    struct inline_range *ranges;     /* read; freed by inline_table_finish */
    size_t range_count, range_capacity;
    struct inline_segment *segments; /* made by inline_table_finish */
    size_t segment_count;
};

/* Names and files are stored as indexes given by INTERN (the line table's
 * string interner): a negative return is an error (-ENOMEM). */
typedef long (*inline_intern_fn)(void *context, const char *text);

/* Append the inlined calls of the compilation unit UNIT. Returns 0 or
 * -ENOMEM. Normal world (libdw, malloc). */
int inline_table_read_unit(Dwarf_Die *unit, struct inline_vector *out, inline_intern_fn intern,
                           void *context);

/* Forget what was read after CALLS calls and RANGES ranges (a unit that
 * did not fit the budget). */
void inline_table_cut(struct inline_vector *inlines, size_t calls, size_t ranges);

/* The bytes the calls and ranges read so far may take once packed (an
 * upper bound: each range gives at most two segments). */
size_t inline_table_budget_bytes(const struct inline_vector *inlines);

/* Turn the ranges into segments: for every address, the innermost inlined
 * call that holds it. Returns 0 or -ENOMEM (then no segments: the module
 * shows no inlined calls). Normal world. */
int inline_table_finish(struct inline_vector *inlines);

/* Bytes the finished calls and segments take in the index. */
size_t inline_table_packed_size(const struct inline_vector *inlines);

void inline_vector_free(struct inline_vector *inlines);

#endif
