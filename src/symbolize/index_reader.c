/* index_reader.c: the published snapshot pointer and its reader count.
 * World: signal-safe (atomics only).
 *
 * Readers count themselves in before loading the pointer; the builder
 * swaps the pointer before it checks the count, so a reader it does not
 * see can only have loaded the new snapshot (sequentially consistent). */
#include "index.h"
#include "index_at_crash.h"
#include "../base/load_touched.h"

#include <stdatomic.h>

/* A program linked with the static library that only calls signal-safe
 * functions would otherwise not pull in index.o, whose constructor builds
 * the index: this reference makes the linker take it. */
extern const char index_builder_anchor;
__attribute__((used)) static const char *const pull_in_index_builder = &index_builder_anchor;

static LOAD_TOUCHED _Atomic(struct index_snapshot *) published;
static LOAD_TOUCHED atomic_int readers;
/* Beside the pointer: a load that leaves the index touches one page of
 * ours for both (each page of .bss is a fault in every process). */
static LOAD_TOUCHED _Atomic(const struct index_at_crash_setup *) left_to_reader;

void index_leave_to_reader(const struct index_at_crash_setup *setup)
{
    atomic_store(&left_to_reader, setup);
}

const struct index_at_crash_setup *index_left_to_reader(void)
{
    return atomic_load(&left_to_reader);
}

/* A reader that finds none, where the load left the index to it,
 * builds one (index_at_crash.c). */
const struct index_snapshot *index_acquire(void)
{
    atomic_fetch_add(&readers, 1);
    const struct index_snapshot *snapshot = atomic_load(&published);
    if (snapshot == NULL && index_left_to_reader() != NULL)
        snapshot = index_at_crash_build();
    return snapshot;
}

const struct index_snapshot *index_published(void)
{
    return atomic_load(&published);
}

const struct index_snapshot *index_publish_first(struct index_snapshot *snapshot)
{
    struct index_snapshot *expected = NULL;
    if (atomic_compare_exchange_strong(&published, &expected, snapshot))
        return snapshot;
    return expected;
}

void index_release(void)
{
    atomic_fetch_sub(&readers, 1);
}

struct index_snapshot *index_publish(struct index_snapshot *snapshot)
{
    return atomic_exchange(&published, snapshot);
}

int index_readers_active(void)
{
    return atomic_load(&readers) != 0;
}
