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

/* How a test reaches its items: MAKE writes item I (KEY, from position
 * I), READ gives one back and checks that its other bytes moved with it. */
struct item_kind {
    size_t size;
    int (*compare)(const void *, const void *);
    void (*make)(void *item, uint64_t key, uint32_t position);
    void (*read)(const void *item, uint64_t *key, uint32_t *position);
};

static void make_item(void *to, uint64_t key, uint32_t position)
{
    *(struct item *)to = (struct item){ key, position, { 0 } };
}

static void read_item(const void *from, uint64_t *key, uint32_t *position)
{
    const struct item *item = from;
    *key = item->key;
    *position = item->position;
}

static void make_wide_item(void *to, uint64_t key, uint32_t position)
{
    *(struct wide_item *)to = (struct wide_item){ { key, position, { 0 } }, position };
}

static void read_wide_item(const void *from, uint64_t *key, uint32_t *position)
{
    const struct wide_item *item = from;
    read_item(&item->item, key, position);
    cr_assert_eq(item->more, *position, "the item moved whole");
}

static void make_narrow_item(void *to, uint64_t key, uint32_t position)
{
    *(struct narrow_item *)to = (struct narrow_item){ (uint32_t)key, position, position * 7 };
}

static void read_narrow_item(const void *from, uint64_t *key, uint32_t *position)
{
    const struct narrow_item *item = from;
    *key = item->key;
    *position = item->position;
    cr_assert_eq(item->filler, *position * 7, "the item moved whole");
}

static const struct item_kind items_24 = { sizeof(struct item), by_key, make_item, read_item };
static const struct item_kind items_32 = { sizeof(struct wide_item), by_key, make_wide_item,
                                           read_wide_item };
static const struct item_kind items_12 = { sizeof(struct narrow_item), by_narrow_key,
                                           make_narrow_item, read_narrow_item };

static void sort_kind(const struct item_kind *kind, enum shape shape, size_t count)
{
    char *items = calloc(count + 1, kind->size);
    uint64_t *keys = calloc(count + 1, sizeof *keys);
    uint32_t *positions = calloc(count + 1, sizeof *positions);
    cr_assert(items && keys && positions);
    for (size_t i = 0; i < count; i++)
        kind->make(items + i * kind->size, key_for(shape, i, count), (uint32_t)i);
    run_sort(items, count, kind->size, kind->compare);
    for (size_t i = 0; i < count; i++)
        kind->read(items + i * kind->size, &keys[i], &positions[i]);
    check_sorted(keys, positions, count);
    free(items);
    free(keys);
    free(positions);
}

static void sort_items(enum shape shape, size_t count)
{
    sort_kind(&items_24, shape, count);
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
    cr_assert_eq(sizeof(struct wide_item), 32);
    EACH_COUNT(sort_kind(&items_32, RANDOM, count); sort_kind(&items_32, FEW_RUNS, count);
               sort_kind(&items_32, FEW_KEYS, count));
}

Test(run_sort, items_of_other_sizes)
{
    cr_assert_eq(sizeof(struct narrow_item), 12);
    EACH_COUNT(sort_kind(&items_12, RANDOM, count); sort_kind(&items_12, SHORT_RUNS, count);
               sort_kind(&items_12, FEW_KEYS, count));
}
