/* lookup.h: address -> module, function, source line, from a snapshot. */
#ifndef EXECINFO_EX_LOOKUP_H
#define EXECINFO_EX_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"

struct inlined_frame;

struct frame_location {
    const char *module_path;     /* NULL: no module holds the address */
    uintptr_t module_bias;
    const char *function;        /* NULL: no symbol contains the address; else the
                                    symbol's own name (mangled, as glibc prints it) */
    const char *function_demangled; /* its readable name: demangled (demangle=1, a C++
                                       or Rust name), else the same as function */
    uintptr_t function_address;  /* runtime address of the function */
    const char *file;            /* NULL: no line data; with inlined calls, the
                                    outermost call's place in the real function */
    unsigned line;
    /* Inlined calls at the call address (lookup_inlined): the innermost
     * one's call, INDEX_INLINE_NONE for none, in INLINE_DATA; the line
     * table's own row, which is the innermost call's line. */
    const struct module_data *inline_data;
    uint32_t inline_call;
    const char *inner_file;
    unsigned inner_line;
    /* Inlined calls resolved out of process (resolved_names.h), innermost
     * first; when set, lookup_inlined reads these instead. */
    const struct inlined_frame *resolved_inlined;
    unsigned resolved_inlined_count;
    char fallback_path[512];     /* storage when the path came from /proc */
};

/* One inlined call, as a frame: its function, and its line inside it. */
struct inlined_frame {
    const char *function;        /* NULL: unknown */
    const char *file;            /* NULL: unknown */
    unsigned line;
};

/* How far back (in symbols, sorted by address) the lookup looks for a
 * sized symbol that encloses a nested one; answer_filter.c keeps that
 * many around each address it is asked about. */
#define LOOKUP_ENCLOSING_LIMIT 8

/* The inlined calls of a frame, innermost first, at most this many. */
#define LOOKUP_INLINED_MAX 64

/* The INDEXth inlined call of LOCATION (0: innermost). Returns 1, or 0
 * past the last. Signal-safe. */
int lookup_inlined(const struct frame_location *location, unsigned index,
                   struct inlined_frame *out);

/* Set LOCATION's inlined calls at ADDRESS (link-time) of DATA, and move
 * its file and line to the outermost call's. Signal-safe. */
void lookup_inline_chain(const struct module_data *data, uint64_t address,
                         struct frame_location *location);

/* Describe ADDRESS. CALL_ADDRESS is the call's own address when ADDRESS is
 * a return address (ADDRESS - 1), else ADDRESS: it gives the source line
 * and the inlined calls,
 * so that the line is the call's, and the function, which ADDRESS may lie
 * just past (a call to a noreturn function as its last instruction, as
 * GCC leaves abort() at the end of a .cold part). LINES 0: no line. SNAPSHOT
 * may be NULL. The strings stay valid until index_release. Signal-safe. */
void lookup_frame(const struct index_snapshot *snapshot, uintptr_t address,
                  uintptr_t call_address, int lines, struct frame_location *out);

/* The address a frame is named by: an exact pc (an interrupted
 * instruction, a function pointer, any address backtrace_symbols gets)
 * by itself, a return address by its call, one byte before. */
static inline uintptr_t lookup_naming_address(uintptr_t address, int exact)
{
    return exact || address == 0 ? address : address - 1;
}

/* Which frames of a list are exact pcs: EXACT[i] when the walk said so
 * (capture_*_kinds), else frame 0 with LOOKUP_FIRST_EXACT (the value of
 * the public BACKTRACE_FIRST_IS_PC), or every frame with LOOKUP_ALL_EXACT
 * (bare addresses, as backtrace_symbols gets them). */
#define LOOKUP_FIRST_EXACT 1
#define LOOKUP_ALL_EXACT (1 << 16)
static inline int lookup_frame_is_exact(const unsigned char *exact, int flags, int i)
{
    if (exact != NULL)
        return exact[i];
    return (flags & LOOKUP_ALL_EXACT) || (i == 0 && (flags & LOOKUP_FIRST_EXACT));
}

/* The module of SNAPSHOT that holds ADDRESS, or NULL. Signal-safe. */
const struct index_module *lookup_module(const struct index_snapshot *snapshot,
                                         uintptr_t address);

/* Whether the index has not read MODULE (a cold cache left it for the
 * crash, index_light.c; a file it could not read; a cache file changed
 * since the load): its frames have no name from the index. A deferred cache file is mapped and
 * checked here, as at any first use. Signal-safe. */
int lookup_module_unread(const struct index_module *module);

#endif
