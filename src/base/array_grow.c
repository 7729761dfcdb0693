/* array_grow.c: the one growth policy of the builder's arrays.
 * World: normal (realloc). */
#include "array_grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *items, size_t *capacity, size_t count, size_t item_size, size_t first)
{
    void *array;

    if (count < *capacity)
        return 0;
    size_t grown = *capacity ? *capacity * 2 : first;
    if (grown < *capacity || grown > SIZE_MAX / item_size)
        return -ENOMEM;
    memcpy(&array, items, sizeof array);
    array = realloc(array, grown * item_size);
    if (array == NULL)
        return -ENOMEM;
    memcpy(items, &array, sizeof array);
    *capacity = grown;
    return 0;
}
