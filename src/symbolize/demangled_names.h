/* demangled_names.h: the demangled forms of a module's symbol names,
 * gathered before the module's data is packed (module_data.c). */
#ifndef EXECINFO_EX_DEMANGLED_NAMES_H
#define EXECINFO_EX_DEMANGLED_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "line_table.h"
#include "symbol_table.h"

#define DEMANGLED_NONE UINT32_MAX

struct demangled_names {
    char *text;          /* the names, each NUL-terminated, one after another */
    size_t used, capacity;
    uint32_t *offsets;   /* per symbol: its demangled name in TEXT, or DEMANGLED_NONE */
    size_t count;
};

/* Demangle the names of SYMBOLS into OUT, until the demangled names hold
 * BUDGET bytes (the later ones then stay mangled). Returns 0 or -ENOMEM
 * (OUT then empty: every name stays mangled). Normal world. */
int demangled_names_gather(const struct symbol_vector *symbols, size_t budget,
                           struct demangled_names *out);

/* The demangled name of symbol I, or NULL. */
static inline const char *demangled_name_of(const struct demangled_names *names, size_t i)
{
    if (i >= names->count || names->offsets[i] == DEMANGLED_NONE)
        return NULL;
    return names->text + names->offsets[i];
}

void demangled_names_free(struct demangled_names *names);

/* Replace the name of each inlined call of LINES (a DW_AT_linkage_name,
 * mangled) by its demangled form, once per distinct name, as long as the
 * packed lines stay within BUDGET bytes (the later ones then stay
 * mangled). Returns 0 or -ENOMEM (the names not yet done stay mangled).
 * Normal world. */
int demangled_inline_names(struct line_vector *lines, size_t budget);

#endif
