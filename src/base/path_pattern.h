/* path_pattern.h: an option's path with %p (the process id) expanded. */
#ifndef EXECINFO_EX_PATH_PATTERN_H
#define EXECINFO_EX_PATH_PATTERN_H

#include <stddef.h>
#include <sys/types.h>

/* PATTERN into OUT (CAPACITY bytes) with each %p replaced by PID and %%
 * by %. Returns 0, or -ENAMETOOLONG (OUT then holds no path). Signal-safe. */
int path_pattern_expand(const char *pattern, pid_t pid, char *out, size_t capacity);

#endif
