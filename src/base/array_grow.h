/* array_grow.h: room for one more item in a malloc'd array. */
#ifndef EXECINFO_EX_ARRAY_GROW_H
#define EXECINFO_EX_ARRAY_GROW_H

#include <stddef.h>

/* If COUNT == *CAPACITY, double *ITEMS (or allocate FIRST items). Returns
 * 0, or -ENOMEM with the array untouched. Normal world (realloc). */
int array_grow(void *items, size_t *capacity, size_t count, size_t item_size, size_t first);

#endif
