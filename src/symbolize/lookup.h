/* lookup.h: address -> module, function, source line, from a snapshot. */
#ifndef EXECINFO_EX_LOOKUP_H
#define EXECINFO_EX_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"

struct frame_location {
    const char *module_path;     /* NULL: no module holds the address */
    uintptr_t module_bias;
    const char *function;        /* NULL: no symbol contains the address */
    uintptr_t function_address;  /* runtime address of the function */
    const char *file;            /* NULL: no line data */
    unsigned line;
    char fallback_path[512];     /* storage when the path came from /proc */
};

/* Describe ADDRESS. CALL_ADDRESS is the call's own address when ADDRESS is
 * a return address (ADDRESS - 1), else ADDRESS: it gives the source line,
 * so that the line is the call's, and the function, which ADDRESS may lie
 * just past (a call to a noreturn function as its last instruction, as
 * GCC leaves abort() at the end of a .cold part). LINES 0: no line. SNAPSHOT
 * may be NULL. The strings stay valid until index_release. Signal-safe. */
void lookup_frame(const struct index_snapshot *snapshot, uintptr_t address,
                  uintptr_t call_address, int lines, struct frame_location *out);

/* The module of SNAPSHOT that holds ADDRESS, or NULL. Signal-safe. */
const struct index_module *lookup_module(const struct index_snapshot *snapshot,
                                         uintptr_t address);

#endif
