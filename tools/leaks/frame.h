/* frame.h: one stack frame as an input names it, before symbolization. */
#ifndef EXECINFO_EX_LEAKS_FRAME_H
#define EXECINFO_EX_LEAKS_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum frame_kind {
    FRAME_MODULE_OFFSET,  /* MODULE:[0xREL]: REL relative to the module's load address */
    FRAME_MODULE_SYMBOL,  /* glibc's PATH:(SYM+0xOFF)[0xADDR]: ADDR a run-time address */
    FRAME_ADDRESS,        /* [0xADDR]: a run-time address in no module */
};

/* The strings are slices of the input while a line is parsed, and
 * NUL-terminated copies once a frame_table holds the frame. */
struct frame {
    enum frame_kind kind;
    const char *module;       /* NULL for FRAME_ADDRESS, and for a glibc frame whose
                               * file name was empty */
    size_t module_length;
    const char *symbol;       /* FRAME_MODULE_SYMBOL (or a module-less glibc frame), else NULL */
    size_t symbol_length;
    int64_t symbol_offset;    /* the return address minus the symbol's */
    uint64_t address;         /* REL for FRAME_MODULE_OFFSET, else the run-time address */
};

#endif
