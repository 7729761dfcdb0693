/* The hook layer's registry, alone: the block set and the stack depot,
 * under threads, and what they refuse. */
#define _GNU_SOURCE
#include "hooks/block_set.h"
#include "hooks/stack_depot.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "support.h"

#define PER_THREAD 20000

static void *insert_and_remove(void *base_pointer)
{
    uintptr_t base = (uintptr_t)base_pointer;
    for (uintptr_t i = 0; i < PER_THREAD; i++)
        if (block_set_insert(base + i * 16) != 0)
            return (void *)1;
    for (uintptr_t i = 0; i < PER_THREAD; i += 2)
        if (!block_set_remove(base + i * 16))
            return (void *)2;
    return NULL;
}

static int count_visit(uintptr_t block, void *context)
{
    (void)block;
    (*(size_t *)context)++;
    return 0;
}

Test(block_set, eight_threads_insert_and_remove_exactly, .timeout = 60)
{
    pthread_t threads[8];
    for (uintptr_t t = 0; t < 8; t++)
        cr_assert_eq(pthread_create(&threads[t], NULL, insert_and_remove,
                                    (void *)((t + 1) << 32)), 0);
    for (int t = 0; t < 8; t++) {
        void *result;
        pthread_join(threads[t], &result);
        cr_assert_null(result, "thread %d failed at step %p", t, result);
    }
    cr_assert_eq(block_set_count(), (size_t)8 * PER_THREAD / 2);
    size_t visited = 0;
    block_set_each(count_visit, &visited);
    cr_assert_eq(visited, (size_t)8 * PER_THREAD / 2);
    for (uintptr_t t = 1; t <= 8; t++) {
        cr_assert(block_set_contains((t << 32) + 16), "odd ones stay");
        cr_assert(!block_set_contains(t << 32), "even ones are gone");
        cr_assert(!block_set_remove(t << 32), "removing twice finds nothing");
    }
}

static int collect_visit(uintptr_t block, void *context)
{
    uintptr_t **cursor = context;
    *(*cursor)++ = block;
    return 0;
}

Test(block_set, walks_a_range_in_order_and_finds_the_block_before)
{
    /* Apart from the other test's addresses: region 40 (40 GiB up). */
    uintptr_t base = (uintptr_t)40 << 30;
    uintptr_t members[] = { base + 16, base + 4096, base + 4096 + 64 * 16,
                            base + (1u << 20), base + ((uintptr_t)1 << 30) + 32 };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(block_set_insert(members[i]), 0);
    cr_assert_eq(block_set_insert(base + 8), -EINVAL, "not 16-byte aligned");
    cr_assert_eq(block_set_insert((uintptr_t)1 << 47), -EINVAL, "beyond user space");
    cr_assert(!block_set_contains(base + 8));

    uintptr_t seen[8] = { 0 }, *cursor = seen;
    block_set_each_in(base + 17, base + (1u << 20) + 1, collect_visit, &cursor);
    cr_assert_eq(cursor - seen, 3, "from above the first to the fourth inclusive");
    cr_assert_eq(seen[0], members[1]);
    cr_assert_eq(seen[1], members[2]);
    cr_assert_eq(seen[2], members[3]);
    cursor = seen;
    block_set_each_in(base, base + ((uintptr_t)2 << 30), collect_visit, &cursor);
    cr_assert_eq(cursor - seen, 5, "across the region boundary");
    cr_assert_eq(seen[4], members[4]);

    cr_assert_eq(block_set_last_at_or_before(members[3]), members[3], "at");
    cr_assert_eq(block_set_last_at_or_before(members[3] - 1), members[2], "before");
    cr_assert_eq(block_set_last_at_or_before(members[4] - 16), members[3],
                 "from the next region back into this one");
    cr_assert_eq(block_set_last_at_or_before(base + 15), 0, "nothing below the first");
    cursor = seen;
    block_set_each_in(UINTPTR_MAX - 3, UINTPTR_MAX, collect_visit, &cursor);
    cr_assert_eq(cursor - seen, 0, "a range at the top of the address space holds nothing");
    for (int i = 0; i < 5; i++)
        cr_assert(block_set_remove(members[i]));
    cr_assert_eq(block_set_last_at_or_before(members[4]), 0);
}

Test(stack_depot, one_id_per_distinct_stack)
{
    cr_assert_eq(stack_depot_init(1 << 20), 0);
    void *a[3] = { (void *)0x1000, (void *)0x2000, (void *)0x3000 };
    void *b[3] = { (void *)0x1000, (void *)0x2000, (void *)0x3001 };
    stack_id first = stack_depot_put(a, 3);
    cr_assert_neq(first, 0);
    cr_assert_eq(stack_depot_put(a, 3), first);
    cr_assert_neq(stack_depot_put(b, 3), first);
    cr_assert_neq(stack_depot_put(a, 2), first);
    void *out[3] = { 0 };
    cr_assert_eq(stack_depot_get(first, out, 3), 3);
    cr_assert_eq(out[2], (void *)0x3000);
    cr_assert_eq(stack_depot_get(first, out, 1), 3, "the full count, truncated copy");
    cr_assert_eq(stack_depot_get(0, out, 3), 0);
    cr_assert_eq(stack_depot_get(first + 1, out, 3), 0, "an id inside an entry");
    cr_assert_eq(stack_depot_get(UINT32_MAX, out, 3), 0);
    cr_assert_eq(stack_depot_put(a, 0), 0);
}

static void *put_many(void *seed_pointer)
{
    static stack_id ids[8][1000];
    int t = (int)(uintptr_t)seed_pointer;
    for (int n = 0; n < 1000; n++) {
        int which = (n * 7 + t * 131) % 1000; /* each thread its own order */
        void *frames[4] = { (void *)0x10, (void *)(uintptr_t)(which + 1), (void *)0x30,
                            (void *)(uintptr_t)which };
        ids[t][which] = stack_depot_put(frames, 4);
    }
    return ids[t];
}

Test(stack_depot, threads_storing_the_same_stacks_agree_on_ids, .timeout = 60)
{
    cr_assert_eq(stack_depot_init(1 << 24), 0);
    struct stack_depot_stats before;
    stack_depot_stats(&before);
    pthread_t threads[8];
    for (uintptr_t t = 0; t < 8; t++)
        pthread_create(&threads[t], NULL, put_many, (void *)t);
    stack_id *ids[8];
    for (int t = 0; t < 8; t++)
        pthread_join(threads[t], (void **)&ids[t]);
    for (int n = 0; n < 1000; n++)
        for (int t = 1; t < 8; t++)
            cr_assert_eq(ids[t][n], ids[0][n], "stack %d, thread %d", n, t);
    struct stack_depot_stats after;
    stack_depot_stats(&after);
    cr_assert_eq(after.stacks - before.stacks, 1000u);
}
