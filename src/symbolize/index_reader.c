/* index_reader.c: the published snapshot pointer and its reader count.
 * World: signal-safe (atomics only).
 *
 * Readers count themselves in before loading the pointer; the builder
 * swaps the pointer before it checks the count, so a reader it does not
 * see can only have loaded the new snapshot (sequentially consistent). */
#include "index.h"

#include <stdatomic.h>

/* A program linked with the static library that only calls signal-safe
 * functions would otherwise not pull in index.o, whose constructor builds
 * the index: this reference makes the linker take it. */
extern const char index_builder_anchor;
__attribute__((used)) static const char *const pull_in_index_builder = &index_builder_anchor;

static _Atomic(struct index_snapshot *) published;
static atomic_int readers;

const struct index_snapshot *index_acquire(void)
{
    atomic_fetch_add(&readers, 1);
    return atomic_load(&published);
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
