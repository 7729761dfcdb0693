/* run_sort: the index builder's stable sort, on the shapes its tables
 * come in (a few long runs, many short ones, reversed, equal keys) and on
 * item sizes with and without its fast copy. Each result is checked for
 * order, stability and that every item is there once. */
#define _GNU_SOURCE
#include "base/run_sort.h"
#include "support.h"

#include <stdint.h>

/* 24 bytes, as a line row; the 32- and 12-byte items below wrap or cut it. */
struct item {
    uint64_t key;
    uint32_t position; /* where it was before the sort */
    uint32_t filler[3];
};
struct wide_item {
    struct item item;
    uint64_t more;
};
struct narrow_item {
    uint32_t key, position, filler;
};

static uint64_t state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static int by_key(const void *a, const void *b)
{
    const struct item *left = a, *right = b;
    return left->key < right->key ? -1 : left->key > right->key;
}

static int by_narrow_key(const void *a, const void *b)
{
    const struct narrow_item *left = a, *right = b;
    return left->key < right->key ? -1 : left->key > right->key;
}

enum shape { RANDOM, SORTED, REVERSED, FEW_RUNS, SHORT_RUNS, FEW_KEYS };

static uint64_t key_for(enum shape shape, size_t i, size_t count)
{
    switch (shape) {
    case RANDOM: return next_random() % (count * 4 + 1);
    case SORTED: return i;
    case REVERSED: return count - i;
    case FEW_RUNS: return (i % (count / 6 + 1)) * 8 + i / (count / 6 + 1); /* 6 runs, interleaved */
    case SHORT_RUNS: return (i / 5) % 2 ? next_random() % 1000 : i % 5 + next_random() % 3;
    case FEW_KEYS: return next_random() % 3;
    }
    return 0;
}

/* Keys in order, equal keys in their old order, each position once. */
static void check_sorted(const uint64_t *keys, const uint32_t *positions, size_t count)
{
    unsigned char *seen = calloc(count + 1, 1);
    cr_assert_not_null(seen);
    for (size_t i = 0; i < count; i++) {
        cr_assert_lt(positions[i], count);
        cr_assert_eq(seen[positions[i]], 0, "position %u twice", positions[i]);
        seen[positions[i]] = 1;
        if (i > 0) {
            cr_assert_leq(keys[i - 1], keys[i], "item %zu out of order", i);
            if (keys[i - 1] == keys[i])
                cr_assert_lt(positions[i - 1], positions[i], "equal keys swapped at %zu", i);
        }
    }
    free(seen);
}

static void sort_items(enum shape shape, size_t count)
{
    struct item *items = calloc(count + 1, sizeof *items);
    uint64_t *keys = calloc(count + 1, sizeof *keys);
    uint32_t *positions = calloc(count + 1, sizeof *positions);
    cr_assert(items && keys && positions);
    for (size_t i = 0; i < count; i++)
        items[i] = (struct item){ key_for(shape, i, count), (uint32_t)i, { 0 } };
    run_sort(items, count, sizeof *items, by_key);
    for (size_t i = 0; i < count; i++) {
        keys[i] = items[i].key;
        positions[i] = items[i].position;
    }
    check_sorted(keys, positions, count);
    free(items);
    free(keys);
    free(positions);
}

static void sort_wide_items(enum shape shape, size_t count)
{
    struct wide_item *items = calloc(count + 1, sizeof *items);
    uint64_t *keys = calloc(count + 1, sizeof *keys);
    uint32_t *positions = calloc(count + 1, sizeof *positions);
    cr_assert(items && keys && positions);
    cr_assert_eq(sizeof *items, 32);
    for (size_t i = 0; i < count; i++)
        items[i] = (struct wide_item){ { key_for(shape, i, count), (uint32_t)i, { 0 } }, i };
    run_sort(items, count, sizeof *items, by_key);
    for (size_t i = 0; i < count; i++) {
        keys[i] = items[i].item.key;
        positions[i] = items[i].item.position;
        cr_assert_eq(items[i].more, positions[i], "the item moved whole");
    }
    check_sorted(keys, positions, count);
    free(items);
    free(keys);
    free(positions);
}

static void sort_narrow_items(enum shape shape, size_t count)
{
    struct narrow_item *items = calloc(count + 1, sizeof *items);
    uint64_t *keys = calloc(count + 1, sizeof *keys);
    uint32_t *positions = calloc(count + 1, sizeof *positions);
    cr_assert(items && keys && positions);
    for (size_t i = 0; i < count; i++)
        items[i] = (struct narrow_item){ (uint32_t)key_for(shape, i, count), (uint32_t)i,
                                         (uint32_t)i * 7 };
    run_sort(items, count, sizeof *items, by_narrow_key);
    for (size_t i = 0; i < count; i++) {
        keys[i] = items[i].key;
        positions[i] = items[i].position;
        cr_assert_eq(items[i].filler, positions[i] * 7, "the item moved whole");
    }
    check_sorted(keys, positions, count);
    free(items);
    free(keys);
    free(positions);
}

static const size_t counts[] = { 0, 1, 2, 3, 7, 64, 1000, 20011 };
#define EACH_COUNT(body)                                                   \
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {       \
        size_t count = counts[c];                                          \
        body;                                                              \
    }

Test(run_sort, random_input_is_sorted_and_stable)
{
    EACH_COUNT(sort_items(RANDOM, count));
}

Test(run_sort, sorted_and_reversed_input)
{
    EACH_COUNT(sort_items(SORTED, count); sort_items(REVERSED, count));
}

Test(run_sort, a_few_long_runs_that_interleave)
{
    EACH_COUNT(sort_items(FEW_RUNS, count));
}

Test(run_sort, many_short_runs)
{
    EACH_COUNT(sort_items(SHORT_RUNS, count));
}

Test(run_sort, many_equal_keys_keep_their_order)
{
    EACH_COUNT(sort_items(FEW_KEYS, count));
}

Test(run_sort, items_of_32_bytes)
{
    EACH_COUNT(sort_wide_items(RANDOM, count); sort_wide_items(FEW_RUNS, count);
               sort_wide_items(FEW_KEYS, count));
}

Test(run_sort, items_of_other_sizes)
{
    cr_assert_eq(sizeof(struct narrow_item), 12);
    EACH_COUNT(sort_narrow_items(RANDOM, count); sort_narrow_items(SHORT_RUNS, count);
               sort_narrow_items(FEW_KEYS, count));
}
