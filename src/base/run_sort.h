/* run_sort.h: a stable sort that is fast on input made of a few sorted
 * runs, as the index builder's tables come. */
#ifndef EXECINFO_EX_RUN_SORT_H
#define EXECINFO_EX_RUN_SORT_H

#include <stddef.h>

/* Sort COUNT items of ITEM_SIZE bytes at ITEMS by COMPARE (qsort's
 * contract), keeping equal items in their order. Without memory for its
 * buffer it sorts with qsort, whose order of equal items may differ: give
 * it a COMPARE under which no two items are equal where that matters.
 * Normal world (malloc). */
void run_sort(void *items, size_t count, size_t item_size,
              int (*compare)(const void *, const void *));

#endif
