/* profile_values.c: the names of a heap profile's values, the one list
 * that the hooks library's profiles and execinfo_ex_leaks's both use, so
 * that a sample type means the same in each.
 * World: any (constant tables, no calls). */
#include "profile_facts.h"

#include <string.h>

const char *const profile_value_names[PROFILE_VALUES] = {
    "alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "peak_objects", "peak_space",
};

int profile_value_is_bytes(enum profile_value value)
{
    return value == PROFILE_ALLOC_SPACE || value == PROFILE_INUSE_SPACE ||
           value == PROFILE_PEAK_SPACE;
}

int profile_value_by_name(const char *name)
{
    for (int v = 0; v < PROFILE_VALUES; v++)
        if (strcmp(name, profile_value_names[v]) == 0)
            return v;
    return -1;
}
