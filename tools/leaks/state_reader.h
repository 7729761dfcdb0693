/* state_reader.h: a saved malloc_get_state() blob (docs/STATE_BLOB.md) as a
 * heap_snapshot: its live blocks with their stacks, each frame named by its
 * module and module-relative address, as a trace names it. */
#ifndef EXECINFO_EX_LEAKS_STATE_READER_H
#define EXECINFO_EX_LEAKS_STATE_READER_H

#include <stddef.h>
#include <stdio.h>

#include "heap_snapshot.h"

/* Is the start of a file (LENGTH bytes of HEAD) a blob's? */
int state_reader_is_blob(const void *head, size_t length);

/* Fill HEAP from the blob in FILE, of which the caller has read HEAD
 * (LENGTH bytes) already; NAME for messages. Returns 0; -EINVAL for an
 * input that is not a whole, intact blob (said on MESSAGES); -ENOMEM; or
 * -errno when FILE cannot be read. Normal world. */
int state_reader_load(struct heap_snapshot *heap, FILE *file, const void *head, size_t length,
                      const char *name, FILE *messages);

/* Remove from AFTER every block that lives in BEFORE at the same address
 * with the same size: what is live in the second and not in the first. */
void state_reader_subtract(struct heap_snapshot *after, const struct heap_snapshot *before);

#endif
