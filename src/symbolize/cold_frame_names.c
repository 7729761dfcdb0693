/* cold_frame_names.c: names for the frames of unread modules
 * (cold_frame_names.h).
 * World: signal-safe (symtab_names.c's open and pread; static scratch
 * taken with a flag, never waited for).
 *
 * Why: a process where the library is only preloaded (LD_PRELOAD with
 * handler=1, the hooks library with heap=0) reads no module at load that
 * has no warm file in the index cache, and only a normal call that names
 * frames or a crash's second stage ever stores one. A program that calls
 * glibc's backtrace_symbols_fd, which ours replaces, would otherwise get
 * "./prog(+0x117c)" for its own frames for good, where glibc names the
 * exported ones ("./prog(outer+0x9)"). The crash handler names such
 * frames the same way (second_stage.c). The scratch is static (its 400
 * KiB are touched only here) and one: a caller that finds it taken does
 * without, rather than wait in what may be a signal handler. */
#include "cold_frame_names.h"
#include "lookup.h"
#include "symtab_names.h"

#include <stdatomic.h>
#include <string.h>

/* Frames of one call looked at; the rest are as the index names them. */
#define COLD_FRAMES_MAX 1024

static struct {
    struct resolved_names names;
    struct symtab_scratch table;
    uintptr_t naming[SYMTAB_ADDRESSES_MAX];
    const struct index_module *unread[COLD_FRAMES_MAX]; /* each frame's, NULL: read or none */
} scratch;
static atomic_flag taken = ATOMIC_FLAG_INIT;

/* Each frame's module when the index has not read it; how many have one. */
static int find_unread(const struct index_snapshot *snapshot, void *const *buffer, int size)
{
    int found = 0;
    for (int i = 0; i < size; i++) {
        const struct index_module *module = lookup_module(snapshot, (uintptr_t)buffer[i]);
        scratch.unread[i] = module != NULL && lookup_module_unread(module) ? module : NULL;
        found += scratch.unread[i] != NULL;
    }
    return found;
}

/* The frames from FIRST on in FIRST's module, named from its file in one
 * pass, and marked done. */
static void name_module(void *const *buffer, const unsigned char *exact, int size, int flags,
                        int first)
{
    const struct index_module *module = scratch.unread[first];
    int count = 0;
    for (int i = first; i < size && count < SYMTAB_ADDRESSES_MAX; i++) {
        if (scratch.unread[i] != module)
            continue;
        scratch.unread[i] = NULL;
        scratch.naming[count++] =
            lookup_naming_address((uintptr_t)buffer[i], lookup_frame_is_exact(exact, flags, i));
    }
    symtab_names_add(&scratch.names, module, scratch.naming, count, &scratch.table);
}

const struct resolved_names *cold_frame_names(const struct index_snapshot *snapshot,
                                              void *const *buffer, const unsigned char *exact,
                                              int size, int flags)
{
    if (snapshot == NULL || size <= 0)
        return NULL;
    if (size > COLD_FRAMES_MAX)
        size = COLD_FRAMES_MAX;
    if (atomic_flag_test_and_set_explicit(&taken, memory_order_acquire))
        return NULL;
    if (find_unread(snapshot, buffer, size) == 0) {
        atomic_flag_clear_explicit(&taken, memory_order_release);
        return NULL;
    }
    scratch.names.under = NULL;
    scratch.names.count = 0;
    scratch.names.inlined_count = 0;
    scratch.names.answer_length = 0;
    for (int i = 0; i < size; i++)
        if (scratch.unread[i] != NULL)
            name_module(buffer, exact, size, flags, i);
    return &scratch.names;
}

void cold_frame_names_done(const struct resolved_names *names)
{
    if (names != NULL)
        atomic_flag_clear_explicit(&taken, memory_order_release);
}
