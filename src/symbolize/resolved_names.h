/* resolved_names.h: what the second stage (a symbolizer process,
 * tools/symbolize/) resolved for a report's addresses: names, lines and
 * inlined calls, parsed in place from its answer and laid over what the
 * index says about the same frames.
 *
 * The answer, one line a frame, fields separated by tabs, in any order
 * of frames, the inlined calls of a frame right after it, innermost first:
 *   F <naming address, hex> <function's address, hex; empty: no symbol>
 *     <name> <demangled name> <file; empty: no line> <line>
 *   I <function; empty: unknown> <file; empty: unknown> <line>
 *   end
 * Addresses are the process's own (the request gave each module's bias). */
#ifndef EXECINFO_EX_RESOLVED_NAMES_H
#define EXECINFO_EX_RESOLVED_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "lookup.h"

#define RESOLVED_FRAMES_MAX 1024
#define RESOLVED_INLINED_MAX 4096
#define RESOLVED_ANSWER_BYTES (256 * 1024)

struct resolved_frame {
    uintptr_t naming_address;     /* the call (a return address - 1), or an exact pc */
    const char *function;         /* NULL: the symbolizer found no symbol */
    const char *demangled;
    uintptr_t function_address;
    const char *file;             /* NULL: no line */
    unsigned line;
    unsigned inlined_first, inlined_count;
};

struct resolved_names {
    /* Names laid first, then these over them (the stage's answer over the
     * handler's own .symtab names); may be NULL. */
    const struct resolved_names *under;
    int count;
    int inlined_count;
    struct resolved_frame frames[RESOLVED_FRAMES_MAX];
    struct inlined_frame inlined[RESOLVED_INLINED_MAX];
    size_t answer_length;
    char answer[RESOLVED_ANSWER_BYTES];  /* the strings point into it */
};

/* Parse NAMES->answer (answer_length bytes) in place. Returns 0 when it
 * ends with its "end" line, -EBADMSG when it does not or a line is
 * malformed (the frames before it are kept). Signal-safe. */
int resolved_names_parse(struct resolved_names *names);

/* lookup_frame of ADDRESS (named by NAMING_ADDRESS), with what NAMES
 * (may be NULL; NAMES->under first) resolved for it laid over: its name,
 * and its line and inlined calls when it has a line. Signal-safe. */
void resolved_lookup_frame(const struct index_snapshot *snapshot,
                           const struct resolved_names *names, uintptr_t address,
                           uintptr_t naming_address, struct frame_location *location);

#endif
