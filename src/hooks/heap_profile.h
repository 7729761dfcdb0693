/* heap_profile.h: a heap profile written to a file (heap_profile.c). */
#ifndef EXECINFO_EX_HEAP_PROFILE_H
#define EXECINFO_EX_HEAP_PROFILE_H

#include "../base/options.h"

/* Gather the profile now and write it to PATTERN (%p: the process id) in
 * OPTIONS' profile_format and profile_sample, under a temporary name
 * renamed over the file when complete. Returns 0 or a negative errno.
 * World: normal; the caller holds heap_busy. */
int heap_profile_write(const char *pattern, const struct options *options);

/* Write the profile= file now, and say on stderr where it went (a line
 * that is not a warning: "execinfo_ex heap profile: PATH"), or why it
 * could not be written. World: normal; the caller holds heap_busy. */
void heap_profile_write_and_tell(void);

#endif
