/* symbolize.h: a frame of the input -> function and file:line, read from
 * the module file the frame names (and its separate debug file), with the
 * library's own index builder and lookup. */
#ifndef EXECINFO_EX_LEAKS_SYMBOLIZE_H
#define EXECINFO_EX_LEAKS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "frame_table.h"
#include "id_index.h"

struct frame_description {
    const char *module;       /* NULL: the frame is in no module */
    uint64_t offset;          /* the call, relative to the module; the run-time
                               * address when RUNTIME */
    int runtime;              /* not placed in a module: [0xADDR], or glibc's
                               * PATH:(SYM+0xOFF)[0xADDR] when SYM is not found */
    const char *function;     /* NULL: unknown; demangled (a C++ or Rust name) */
    const char *mangled;      /* the symbol's own name; the input's for RUNTIME */
    int64_t function_offset;  /* RUNTIME: glibc's offset from FUNCTION */
    const char *file;         /* NULL: unknown */
    unsigned line;
};

struct symbolizer_module;

struct symbolizer {
    const struct frame_table *frames;
    struct frame_description *descriptions;   /* by frame id, made on demand */
    unsigned char *described;
    struct symbolizer_module *modules;        /* one per module path */
    size_t module_count, module_capacity;
    struct id_index module_index;
};

/* Describe the frames of FRAMES (which must not change any more). Returns
 * 0 or -ENOMEM. Normal world. */
int symbolizer_init(struct symbolizer *symbolizer, const struct frame_table *frames);
void symbolizer_free(struct symbolizer *symbolizer);

/* The description of frame ID; NULL only when memory ran out. Each module
 * file is read once. The strings live as long as the symbolizer. */
const struct frame_description *symbolizer_describe(struct symbolizer *symbolizer, uint32_t id);

#endif
