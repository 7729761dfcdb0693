/* stack_counts.h: what the allocations made at each stack of the depot add
 * up to, in all and still live, and at the peak of the live bytes: the
 * facts behind a heap profile (heap_profile.c).
 *
 * The counts live in the stack's depot entry; the stacks that have any are
 * listed here, so that a profile walks them and nothing else. Counting
 * runs in the allocation path: lock-free, malloc-free, signal-safe. */
#ifndef EXECINFO_EX_STACK_COUNTS_H
#define EXECINFO_EX_STACK_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

/* In a depot entry. In use = allocated - freed: each call adds to one
 * side only, so that no count ever goes below zero. PEAK_* are the in-use
 * counts at the last snapshot of the peak. */
struct stack_counts {
    _Atomic uint64_t allocated_objects;
    _Atomic uint64_t allocated_bytes;
    _Atomic uint64_t freed_objects;
    _Atomic uint64_t freed_bytes;
    _Atomic uint64_t peak_objects;
    _Atomic uint64_t peak_bytes;
    _Atomic uint64_t origin;   /* enum stack_origin */
};

/* Whose allocations a stack makes: the library's own (a frame in one of
 * the code ranges given to stack_counts_exclude) are not counted. */
enum stack_origin { STACK_ORIGIN_UNKNOWN, STACK_ORIGIN_PROGRAM, STACK_ORIGIN_LIBRARY };

/* Allocations made from inside [START, END) (the library's own code: the
 * index it builds at load, a report) are in no profile. Up to 2 ranges;
 * set at initialisation, before any allocation is counted. */
void stack_counts_exclude(uintptr_t start, uintptr_t end);

/* A stack of DEPTH frames (heap_frames: where a capture stops) may have
 * been cut short of the library's frame: the loader's dlopen of libdw
 * from the core's index build at load is 16 frames deep on aarch64. At
 * the first allocation of such a stack with no frame in the program's own
 * code [PROGRAM_START, PROGRAM_END), DEEPER, called in the allocating
 * thread, walks the current stack further and says whether it reaches
 * the library's code. Set at initialisation, with the ranges. */
void stack_counts_look_deeper(int depth, uintptr_t program_start, uintptr_t program_end,
                              int (*deeper)(void));

/* Whether one of FRAMES is in the ranges given to stack_counts_exclude. */
int stack_counts_in_excluded(void *const *frames, int count);

/* Map the list of counted stacks (room for CAPACITY stacks, committed as
 * used). Returns 0 or mmap's -errno. World: normal. */
int stack_counts_init(size_t capacity);

/* A block of BYTES was allocated at STACK (not 0), freed, or resized in
 * place from OLD_BYTES to NEW_BYTES (a grown block counts the growth as
 * allocated bytes, a shrunk one the loss as freed bytes; the object
 * counts stay). World: signal-safe; lock-free, thread-safe. */
void stack_counts_allocated(stack_id stack, size_t bytes);
void stack_counts_freed(stack_id stack, size_t bytes);
void stack_counts_resized(stack_id stack, size_t old_bytes, size_t new_bytes);

/* The calling thread's share of the live total, handed on now (a thread
 * that exits). World: signal-safe. */
void stack_counts_flush(void);

/* In a fork child: a snapshot another thread was taking is not. */
void stack_counts_after_fork_in_child(void);

/* The stacks that have counts: how many are listed, and the Ith (0 for
 * one still being listed). World: signal-safe. */
size_t stack_counts_listed(void);
stack_id stack_counts_stack(size_t i);

/* One stack's counts as a profile shows them. */
struct stack_totals {
    uint64_t allocated_objects, allocated_bytes;
    uint64_t inuse_objects, inuse_bytes;
    uint64_t peak_objects, peak_bytes;
};
void stack_counts_read(stack_id stack, struct stack_totals *out);

/* The live bytes of every counted block, as last handed on by the threads
 * (each keeps up to STACK_COUNTS_UNFLUSHED_MAX to itself), and the highest
 * such total, the one the peak counts were taken at (within 1% of it).
 * World: signal-safe. */
#define STACK_COUNTS_UNFLUSHED_MAX ((int64_t)32 << 10)
uint64_t stack_counts_live_bytes(void);
uint64_t stack_counts_peak_bytes(void);

#endif
