/* block.h: the layout of a block the hook layer hands out.
 *
 *   real (glibc's)                                   user
 *   | padding for alignment | header (16) | front guard | user bytes | rear guard + slack |
 *
 * The front guard is the guard option rounded up to 16 bytes (so that the
 * user pointer keeps malloc's alignment); the rear guard is at least the
 * guard option, plus whatever glibc's chunk has beyond it. Both are filled
 * with a pattern and checked at free, at quarantine eviction, on demand
 * and by the crash handler. The header's check word catches damage to the
 * header itself (an underflow past the front guard). */
#ifndef EXECINFO_EX_BLOCK_H
#define EXECINFO_EX_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

/* FREEING: claimed by one free, whose fill is not written yet; FREED once
 * it is (a walk must not check the fill of a block before that). */
enum block_state { BLOCK_LIVE = 1, BLOCK_FREED = 2, BLOCK_FREEING = 3 };
/* The state byte's top bit: a live block the leak check must not report
 * (backtrace_heap_ignore). Outside the check word, as the state is, so
 * that it is set with one atomic step; a free clears it. */
#define BLOCK_STATE_MASK 0x7f
#define BLOCK_IGNORED 0x80

struct block_header {
    uint64_t size_and_state;   /* size << 16 | alignment log2 << 8 | state */
    stack_id alloc_stack;      /* the allocating stack and thread */
    uint32_t check;            /* of the fields above, the address, a secret */
};

#define BLOCK_HEADER_SIZE 16
#define BLOCK_SIZE_MAX ((uint64_t)1 << 47)   /* what size_and_state can hold */
#define FRONT_GUARD_PATTERN 0xfa
#define REAR_GUARD_PATTERN 0xfb

/* Set once at initialisation from the options; read by every call. */
struct block_layout {
    size_t front_guard;        /* bytes between header and user, a multiple of 16 */
    size_t rear_guard;         /* at least this many after the user bytes */
    uint32_t secret;           /* mixed into the check word */
};

void block_layout_init(struct block_layout *layout, size_t guard, uint32_t secret);

/* The real size to ask glibc for SIZE user bytes at ALIGNMENT (a power of
 * two >= 16), or 0 when it would overflow. */
size_t block_real_size(const struct block_layout *layout, size_t size, size_t alignment);

/* Where the user bytes start in a real block of that ALIGNMENT. */
size_t block_front(const struct block_layout *layout, size_t alignment);

static inline struct block_header *block_header_of(const struct block_layout *layout,
                                                   uintptr_t user)
{
    return (struct block_header *)(user - layout->front_guard - BLOCK_HEADER_SIZE);
}

/* Write the header and the guards of a block handed out at USER. USABLE is
 * what the real block has from USER on (glibc's usable size minus front). */
void block_prepare(const struct block_layout *layout, uintptr_t user, size_t size,
                   size_t alignment, stack_id alloc_stack, size_t usable);

/* Give a LIVE block NEW_SIZE user bytes in place (realloc), the rear
 * guard moved: the caller knows the real block has room for NEW_SIZE and
 * the guard. Everything past the user bytes already holds the rear
 * pattern (block_prepare fills the whole slack), so growing writes only
 * the header; shrinking fills the bytes given up first. */
void block_resize(const struct block_layout *layout, uintptr_t user, size_t old_size,
                  size_t new_size);

/* Move a LIVE block to FREEING atomically: 1 for the one caller that did,
 * 0 if another thread freed it first (a racing double free). That caller
 * then writes the fill and calls block_finish_free (FREEING -> FREED). */
int block_claim_free(const struct block_layout *layout, uintptr_t user);
void block_finish_free(const struct block_layout *layout, uintptr_t user);

/* What a header says, if its check word holds. Signal-safe. */
struct block_facts {
    size_t size;
    size_t alignment;
    enum block_state state;
    stack_id alloc_stack;
    int ignored;               /* BLOCK_IGNORED is set */
};
int block_read(const struct block_layout *layout, uintptr_t user, struct block_facts *facts);

/* Mark a LIVE block ignored by the leak check: 1, or 0 if it is not
 * live. Signal-safe. */
int block_set_ignored(const struct block_layout *layout, uintptr_t user);

/* The real (glibc) pointer of a block. */
uintptr_t block_real(const struct block_layout *layout, uintptr_t user, size_t alignment);

/* First damaged byte of the guards, as an offset from USER (negative: in
 * front), in *DAMAGE; returns 1 if any guard byte differs from its
 * pattern, 0 if they hold. USABLE as for block_prepare; the rear guard
 * checked is [size, size + rear_guard) (the slack is filled but only the
 * guard is required to hold). Signal-safe. */
int block_guards_damaged(const struct block_layout *layout, uintptr_t user, size_t size,
                         long *damage);

/* Fill up to LIMIT of the SIZE user bytes with BYTE; check that they still
 * hold it (0, or 1 with the first changed offset in *CHANGED). */
void block_fill(uintptr_t user, size_t size, size_t limit, int byte);
int block_fill_changed(uintptr_t user, size_t size, size_t limit, int byte, size_t *changed);

#endif
