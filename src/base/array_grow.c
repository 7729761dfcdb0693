/* array_grow.c: the one growth policy of the builder's arrays.
 * World: normal (realloc). */
#include "array_grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *items, size_t *capacity, size_t count, size_t item_size, size_t first)
{
    void *array, *bigger;

    if (count < *capacity)
        return 0;
    size_t grown = *capacity ? *capacity * 2 : first;
    if (grown < *capacity || grown > SIZE_MAX / item_size)
        return -ENOMEM;
    memcpy(&array, items, sizeof array);
    bigger = realloc(array, grown * item_size);
    if (bigger == NULL)
        return -ENOMEM; /* *items still holds the old array */
    memcpy(items, &bigger, sizeof bigger);
    *capacity = grown;
    return 0;
}
