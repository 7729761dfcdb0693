/* cold_frame_names.h: names from their files' symbol tables for the frames
 * of modules the index has not read, for the signal-safe calls that name
 * frames (backtrace_symbols_fd, backtrace_print_fd, print_trace). */
#ifndef EXECINFO_EX_COLD_FRAME_NAMES_H
#define EXECINFO_EX_COLD_FRAME_NAMES_H

#include "index.h"
#include "resolved_names.h"

/* Names for those of the SIZE frames of BUFFER (EXACT and FLAGS as
 * lookup_frame_is_exact takes them) whose module the index has not read,
 * from each such module's .symtab, else .dynsym (symtab_names.h), to lay
 * over the index's view (resolved_lookup_frame). NULL when no frame needs
 * them, or while another caller (a thread, or a handler that interrupted
 * one) holds the one scratch: its frames are then as the index names
 * them. Names other than NULL are given back with cold_frame_names_done.
 * Signal-safe. */
const struct resolved_names *cold_frame_names(const struct index_snapshot *snapshot,
                                              void *const *buffer, const unsigned char *exact,
                                              int size, int flags);

void cold_frame_names_done(const struct resolved_names *names);

#endif
