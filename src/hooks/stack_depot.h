/* stack_depot.h: every distinct call stack stored once, named by a 32-bit id.
 *
 * The heap hooks give each allocation the id of its stack instead of the
 * frames themselves; the crash handler turns ids back into frames. Stacks
 * are never removed: the depot only grows, until its reserve is used up. */
#ifndef EXECINFO_EX_STACK_DEPOT_H
#define EXECINFO_EX_STACK_DEPOT_H

#include <stddef.h>
#include <stdint.h>

/* Frames kept of a stack; a longer one is truncated to its first 64. */
#define STACK_DEPOT_MAX_FRAMES 64

typedef uint32_t stack_id;   /* 0: no stack */

/* Map an arena of RESERVE_BYTES (MAP_NORESERVE: pages are committed as
 * stacks arrive; capped at 32 GiB, what 32-bit ids can name) and the
 * first level of the index (4096 slots, 32 KiB; put maps each larger one
 * when the last is half full). Idempotent: once it succeeded, later
 * calls return 0 and keep the first reserve. Returns 0, -EINVAL for a
 * reserve smaller than one 64-frame stack, or mmap's -errno (a later call
 * may try again). World: normal (mmap); thread-safe (a caller that finds
 * another thread mapping waits for it). */
int stack_depot_init(size_t reserve_bytes);

/* The id of the first COUNT frames of FRAMES (at most 64 are kept), stored
 * now if this stack is new; equal stacks get one id, never reused. Returns
 * 0 if the depot is not initialised, COUNT <= 0, or the arena (or the
 * index, when a larger level cannot be mapped) is full. World:
 * signal-safe; lock-free (a put never waits for another thread, even one
 * it interrupted), malloc-free, thread-safe; it may mmap. */
stack_id stack_depot_put(void *const *frames, int count);

/* The hash stack_depot_put gives the first COUNT (1 to 64) frames of
 * FRAMES, and the put with it, for a caller that keeps its own cache of
 * stacks by that hash: one hash for both. World: signal-safe. */
uint32_t stack_depot_hash(void *const *frames, int count);
stack_id stack_depot_put_hashed(void *const *frames, int count, uint32_t hash);

/* Copy up to CAPACITY frames of stack ID into FRAMES and return the
 * stack's full frame count; 0 for id 0, an id that does not name a stored
 * stack (out of range, not the start of an entry, not in the index: an
 * entry that lost a race or is still being written) or a damaged entry.
 * World: signal-safe; every read is checked, so any id is safe to pass. */
int stack_depot_get(stack_id id, void **frames, int capacity);

/* The counts of stack ID (stack_counts.h), which live in its entry, 8
 * bytes in. ID must be one stack_depot_put returned (not 0): it is not
 * checked. Inline, with the arena's base exposed for it: every counted
 * allocation and free asks. World: signal-safe. */
#define STACK_DEPOT_COUNTS_OFFSET 8
extern char *stack_depot_arena __attribute__((visibility("hidden")));
struct stack_counts;
static inline struct stack_counts *stack_depot_counts(stack_id id)
{
    return (struct stack_counts *)(stack_depot_arena + (size_t)id * 8 + STACK_DEPOT_COUNTS_OFFSET);
}

struct stack_depot_stats {
    size_t stacks;          /* distinct stacks published */
    size_t bytes_used;      /* of the arena, entries wasted by races included */
    size_t bytes_reserved;  /* the arena's size; 0 before init */
};

/* World: signal-safe (atomic loads). */
void stack_depot_stats(struct stack_depot_stats *out);

#endif
