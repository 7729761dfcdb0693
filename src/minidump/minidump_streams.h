/* minidump_streams.h: the streams of a minidump, one writer each, over
 * one shared state (minidump_write fills it, then calls them in
 * Breakpad's order).
 * World: signal-safe. */
#ifndef EXECINFO_EX_MINIDUMP_STREAMS_H
#define EXECINFO_EX_MINIDUMP_STREAMS_H

#include "minidump.h"
#include "minidump_file.h"
#include "minidump_maps.h"

struct minidump_state {
    struct minidump_file file;
    const struct minidump_input *input;
    struct minidump_maps maps;
    /* The memory list: the stacks, the bytes around the faulting pc. */
    struct md_memory_descriptor *memory;
    size_t memory_count, memory_capacity;
    /* The crashing thread's context in the thread list (data_size 0: none). */
    struct md_location crashing_context;
};

/* Each writes its stream and fills ENTRY, or returns a negative errno
 * and leaves the stream out. */
int minidump_thread_list(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_thread_names(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_module_list(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_memory_list(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_exception(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_system_info(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_misc_info(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_memory_info_list(struct minidump_state *state, struct md_raw_directory *entry);
int minidump_dso_debug(struct minidump_state *state, struct md_raw_directory *entry);

/* A Linux stream of Breakpad's: the content of PATH as stream TYPE. */
int minidump_linux_file(struct minidump_state *state, uint32_t type, const char *path,
                        struct md_raw_directory *entry);

/* How many threads the thread list holds: the crashing one, then the others. */
int minidump_thread_count(const struct minidump_input *input);

/* Keep a range for the memory list (dropped when the list is full). */
void minidump_remember_memory(struct minidump_state *state, uint64_t start,
                              struct md_location where);

#endif
