/* module_data.h: build the index data of one module. */
#ifndef EXECINFO_EX_MODULE_DATA_H
#define EXECINFO_EX_MODULE_DATA_H

#include "index.h"
#include "module_list.h"

/* Read MODULE's symbols (and, if LINE_BUDGET > 0, its source lines and
 * inlined calls, at most LINE_BUDGET bytes) into one fresh mapping, with
 * the demangled form of each C++ or Rust name beside the name itself.
 * Returns NULL when the
 * file cannot be read, is not ELF, or is not the file that was loaded (its
 * build-id differs): the module is then shown as path(+offset). When
 * memory ran out (here, in libelf or in libdw) errno is ENOMEM, with NULL
 * or with data that may lack some symbols or all lines: a try later may do
 * better. Otherwise errno is 0 with the data. Sets *LINE_BYTES to what the
 * lines took. Normal world. */
const struct module_data *module_data_build(const struct module_info *module,
                                            size_t line_budget, size_t *line_bytes);

/* LINE_FLAGS of module_data_build_recorded and the index cache. */
#define LINE_INLINES 1        /* the inlined calls too */
#define LINE_OWN_TABLE_ONLY 2 /* the module's own table: no separate debug file */

/* The same, with the inlined calls only if LINE_FLAGS has LINE_INLINES, the
 * lines of the module's own file only if LINE_OWN_TABLE_ONLY, recording in PROBES
 * every debug file candidate looked at (src/symbolize/file_probes.h), so
 * that a cached copy can be checked; names (of symbols and of inlined
 * calls) are demangled only if DEMANGLE (the demangle= option). */
struct file_probes;
const struct module_data *module_data_build_recorded(const struct module_info *module,
                                                     size_t line_budget, int line_flags,
                                                     size_t *line_bytes,
                                                     struct file_probes *probes, int demangle);

/* The same, with only what an answer about FILTER's addresses needs
 * (answer_filter.h: the symbols the lookup reaches from them, the
 * compilation units that hold them; NULL: everything): the second
 * stage's answer, which the whole module would give too. Data built
 * with a filter is not for the index or its cache. */
struct answer_filter;
const struct module_data *module_data_build_filtered(const struct module_info *module,
                                                     size_t line_budget, int line_flags,
                                                     size_t *line_bytes,
                                                     struct file_probes *probes, int demangle,
                                                     struct answer_filter *filter);

#endif
