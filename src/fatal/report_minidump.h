/* report_minidump.h: a crash's minidump (minidump=PATH) and the line of
 * the report that names it. */
#ifndef EXECINFO_EX_REPORT_MINIDUMP_H
#define EXECINFO_EX_REPORT_MINIDUMP_H

#include "crash_facts.h"
#include "../base/options.h"
#include "../threads/thread_facts.h"

/* Write the minidump of FACTS and THREADS (NULL: the crashing thread
 * only) where OPTIONS->minidump says (nothing if it is empty), then tell
 * the report on FD: "*** minidump: PATH" or "*** minidump: PATH failed
 * (errno N)"; as JSON (JSON nonzero), a "minidump" member
 * ({"path": ..., "errno": null or N}). Nothing of the dump goes to FD.
 * Signal-safe. */
void report_minidump(int fd, int json, const struct options *options,
                     const struct crash_facts *facts, const struct thread_set *threads);

#endif
