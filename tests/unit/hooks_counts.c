/* The stack counts alone (src/hooks/stack_counts.c): allocations, frees
 * and resizes add up per stack; a stack is listed once, at its first
 * counted allocation; the library's own stacks are never counted; the
 * peak counts are those of the highest live total, within 1%; and
 * threads counting on one stack at once lose nothing. */
#define _GNU_SOURCE
#include "hooks/stack_counts.h"

#include <pthread.h>
#include <stdint.h>

#include "support.h"

#define WORDS 5

static stack_id put_stack(uint32_t thread, uintptr_t first_frame)
{
    void *words[WORDS] = { (void *)(uintptr_t)thread, (void *)first_frame, (void *)0x7f0000001000,
                           (void *)0x7f0000002000, (void *)0x7f0000003000 };
    stack_id id = stack_depot_put(words, WORDS);
    cr_assert_neq(id, 0);
    return id;
}

static void init(void)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    cr_assert_eq(stack_counts_init(1 << 16), 0);
}

static struct stack_totals totals_of(stack_id stack)
{
    struct stack_totals totals;
    stack_counts_read(stack, &totals);
    return totals;
}

Test(stack_counts, allocations_frees_and_resizes_add_up, .init = init)
{
    stack_id a = put_stack(1, 0x7f000000a000), b = put_stack(1, 0x7f000000b000);
    for (int i = 0; i < 10; i++)
        stack_counts_allocated(a, 100);
    stack_counts_freed(a, 100);
    stack_counts_resized(a, 100, 250);   /* grown: 150 more allocated */
    stack_counts_resized(a, 100, 40);    /* shrunk: 60 freed */
    stack_counts_allocated(b, 7);
    struct stack_totals t = totals_of(a);
    cr_expect_eq(t.allocated_objects, 10);
    cr_expect_eq(t.allocated_bytes, 1000 + 150);
    cr_expect_eq(t.inuse_objects, 9);
    cr_expect_eq(t.inuse_bytes, 900 + 150 - 60);
    t = totals_of(b);
    cr_expect_eq(t.allocated_objects, 1);
    cr_expect_eq(t.inuse_bytes, 7);
    /* Each listed once, in the order of their first allocation. */
    cr_assert_eq(stack_counts_listed(), 2);
    cr_expect_eq(stack_counts_stack(0), a);
    cr_expect_eq(stack_counts_stack(1), b);
    cr_expect_eq(stack_counts_stack(2), 0);
}

Test(stack_counts, the_librarys_own_stacks_are_not_counted, .init = init)
{
    stack_counts_exclude(0x7f0000002000, 0x7f0000002001); /* the third frame of every stack */
    stack_id own = put_stack(1, 0x7f000000a000);
    stack_counts_allocated(own, 100);
    stack_counts_freed(own, 100);
    struct stack_totals t = totals_of(own);
    cr_expect_eq(t.allocated_objects, 0);
    cr_expect_eq(t.inuse_bytes, 0);
    cr_expect_eq(stack_counts_listed(), 0);
    cr_expect_eq(stack_counts_live_bytes(), 0);
}

/* The live total grows past the last snapshot by more than 1% at each of
 * these blocks (each more than the 32 KiB a thread keeps to itself): the
 * last snapshot is the peak, whatever is freed afterwards. */
Test(stack_counts, peak_counts_are_those_at_the_highest_total, .init = init)
{
    stack_id big = put_stack(1, 0x7f000000a000), small = put_stack(1, 0x7f000000b000);
    for (int i = 0; i < 20; i++)
        stack_counts_allocated(small, 1000);
    for (int i = 0; i < 8; i++)
        stack_counts_allocated(big, 1 << 20);
    for (int i = 0; i < 8; i++)
        stack_counts_freed(big, 1 << 20);
    for (int i = 0; i < 30; i++)
        stack_counts_allocated(small, 1000); /* the total stays far below the peak */
    stack_counts_flush();
    struct stack_totals t = totals_of(big);
    cr_expect_eq(t.peak_objects, 8);
    cr_expect_eq(t.peak_bytes, 8 << 20);
    cr_expect_eq(t.inuse_bytes, 0);
    t = totals_of(small);
    cr_expect_eq(t.peak_objects, 20);
    cr_expect_eq(t.peak_bytes, 20000);
    cr_expect_eq(t.inuse_objects, 50);
    cr_expect_eq(stack_counts_peak_bytes(), (8 << 20) + 20000);
    cr_expect_eq(stack_counts_live_bytes(), 50000);
}

#define THREADS 4
#define ROUNDS 100000

static stack_id shared;

/* Each thread allocates on its own stack and frees on the shared one,
 * as a program's threads free each other's blocks. */
static void *count_in_thread(void *argument)
{
    stack_id own = put_stack(100 + (uint32_t)(uintptr_t)argument, 0x7f000000c000);
    for (int i = 0; i < ROUNDS; i++) {
        stack_counts_allocated(own, 3);
        stack_counts_freed(shared, 5);
    }
    return NULL;
}

Test(stack_counts, threads_lose_no_count, .init = init, .timeout = 60)
{
    shared = put_stack(1, 0x7f000000d000);
    for (int i = 0; i < THREADS * ROUNDS; i++)
        stack_counts_allocated(shared, 5);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, count_in_thread, (void *)(uintptr_t)i), 0);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_join(threads[i], NULL), 0);
    struct stack_totals t = totals_of(shared);
    cr_expect_eq(t.inuse_objects, 0);
    cr_expect_eq(t.inuse_bytes, 0);
    uint64_t allocated = 0;
    for (size_t i = 0; i < stack_counts_listed(); i++)
        allocated += totals_of(stack_counts_stack(i)).allocated_objects;
    cr_expect_eq(allocated, (uint64_t)2 * THREADS * ROUNDS);
    cr_expect_eq(stack_counts_listed(), 1 + THREADS);
}
