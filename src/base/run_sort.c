/* run_sort.c: a natural merge sort. The runs already sorted in the input
 * are found in one pass, then merged pairwise, one pass over the items
 * for each halving of their number.
 * Runs merge in place, through a buffer as long as the shorter part of
 * the two that interleaves.
 * World: normal (malloc).
 *
 * Why not qsort alone: glibc's qsort is a merge sort that does not look
 * at the order it is given, so it makes n log n comparisons through its
 * function pointer whatever the input. The index builder's tables come
 * nearly sorted: a line table's rows are a few sorted sequences (79,512
 * rows in 6 runs in issue 15's C++ benchmark), which merge in three
 * passes where qsort makes seventeen, and in place: a buffer as long as
 * the table is fresh memory, each page of it a fault. */
#include "run_sort.h"

#include <stdlib.h>
#include <string.h>

typedef int (*compare_fn)(const void *, const void *);

/* Where each sorted run of ITEMS ends (an index), into ENDS; their number. */
static size_t find_runs(const char *items, size_t count, size_t size, compare_fn compare,
                        size_t *ends)
{
    size_t runs = 0;
    for (size_t i = 1; i < count; i++)
        if (compare(items + (i - 1) * size, items + i * size) > 0)
            ends[runs++] = i;
    ends[runs++] = count;
    return runs;
}

/* The first item of [FROM, TO) that KEY sorts before (TO if none). */
static size_t first_after(const char *items, size_t from, size_t to, size_t size,
                          const void *key, compare_fn compare)
{
    while (from < to) {
        size_t middle = from + (to - from) / 2;
        if (compare(key, items + middle * size) < 0)
            to = middle;
        else
            from = middle + 1;
    }
    return from;
}

/* The first item of [FROM, TO) that does not sort before KEY. */
static size_t first_not_before(const char *items, size_t from, size_t to, size_t size,
                               const void *key, compare_fn compare)
{
    while (from < to) {
        size_t middle = from + (to - from) / 2;
        if (compare(items + middle * size, key) < 0)
            from = middle + 1;
        else
            to = middle;
    }
    return from;
}

/* The sorted runs [LEFT, MIDDLE) and [MIDDLE, RIGHT_END) of ITEMS (byte
 * pointers), merged in place through BUFFER, which holds the shorter one;
 * of two equal items the left one first. */
static inline __attribute__((always_inline)) void
merge_items(char *left, char *middle, char *right_end, char *buffer, size_t size,
            compare_fn compare)
{
    if (middle - left <= right_end - middle) {
        /* Forward: the left run waits in the buffer. */
        char *from = buffer, *from_end = buffer + (middle - left), *right = middle, *out = left;
        memcpy(buffer, left, (size_t)(middle - left));
        while (from < from_end && right < right_end) {
            if (compare(right, from) < 0) {
                memcpy(out, right, size);
                right += size;
            } else {
                memcpy(out, from, size);
                from += size;
            }
            out += size;
        }
        memcpy(out, from, (size_t)(from_end - from));
        return;
    }
    /* Backward: the right run waits in the buffer. */
    char *from = buffer + (right_end - middle), *left_end = middle, *out = right_end;
    memcpy(buffer, middle, (size_t)(right_end - middle));
    while (from > buffer && left_end > left) {
        out -= size;
        if (compare(from - size, left_end - size) < 0) {
            left_end -= size;
            memcpy(out, left_end, size);
        } else {
            from -= size;
            memcpy(out, from, size);
        }
    }
    memcpy(out - (from - buffer), buffer, (size_t)(from - buffer));
}

/* The index's tables have items of 24 and 32 bytes: with the size known,
 * an item is copied in a few moves, where a call of memcpy cost more than
 * the comparison. */
static void merge(char *left, char *middle, char *right_end, char *buffer, size_t size,
                  compare_fn compare)
{
    if (size == 24)
        merge_items(left, middle, right_end, buffer, 24, compare);
    else if (size == 32)
        merge_items(left, middle, right_end, buffer, 32, compare);
    else
        merge_items(left, middle, right_end, buffer, size, compare);
}

/* Room for BYTES in *BUFFER; 0, or -1 without memory. */
static int buffer_reserve(char **buffer, size_t *capacity, size_t bytes)
{
    if (bytes <= *capacity)
        return 0;
    char *grown = realloc(*buffer, bytes);
    if (grown == NULL)
        return -1;
    *buffer = grown;
    *capacity = bytes;
    return 0;
}

/* Runs [FROM, MIDDLE) and [MIDDLE, TO) of ITEMS, merged in place. Only
 * the items that interleave move: those of the left run that sort before
 * the right run's first, and those of the right run that sort after the
 * left run's last, stay where they are (sequences of a line table
 * rarely overlap). Returns 0, or -1 without memory (ITEMS unchanged). */
static int merge_runs(char *items, size_t from, size_t middle, size_t to, size_t size,
                      compare_fn compare, char **buffer, size_t *capacity)
{
    if (from == middle || middle == to ||
        compare(items + (middle - 1) * size, items + middle * size) <= 0)
        return 0;
    size_t start = first_after(items, from, middle, size, items + middle * size, compare);
    size_t end = first_not_before(items, middle, to, size, items + (middle - 1) * size, compare);
    size_t shorter = middle - start < end - middle ? middle - start : end - middle;
    if (buffer_reserve(buffer, capacity, shorter * size) < 0)
        return -1;
    merge(items + start * size, items + middle * size, items + end * size, *buffer, size,
          compare);
    return 0;
}

void run_sort(void *items, size_t count, size_t size, compare_fn compare)
{
    if (count < 2)
        return;
    size_t *ends = malloc(count * sizeof *ends);
    if (ends == NULL) {
        qsort(items, count, size, compare);
        return;
    }
    size_t runs = find_runs(items, count, size, compare, ends);
    char *buffer = NULL;
    size_t capacity = 0;
    while (runs > 1) {
        size_t merged = 0, from = 0;
        for (size_t run = 0; run < runs; run += 2) {
            size_t middle = ends[run], to = run + 1 < runs ? ends[run + 1] : middle;
            if (merge_runs(items, from, middle, to, size, compare, &buffer, &capacity) < 0) {
                /* The runs merged so far stay sorted runs: qsort ends it. */
                free(buffer);
                free(ends);
                qsort(items, count, size, compare);
                return;
            }
            ends[merged++] = to;
            from = to;
        }
        runs = merged;
    }
    free(buffer);
    free(ends);
}
