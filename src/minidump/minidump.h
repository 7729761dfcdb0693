/* minidump.h: a Breakpad-format minidump of this process, written from a
 * crash handler (src/minidump/; docs/CRASH_REPORT.md, "The minidump"). */
#ifndef EXECINFO_EX_MINIDUMP_H
#define EXECINFO_EX_MINIDUMP_H

#include "../fatal/crash_facts.h"
#include "../symbolize/index.h"
#include "../threads/thread_facts.h"

struct minidump_input {
    const struct crash_facts *crash;       /* the crashing thread: its context, signal */
    const struct thread_set *threads;      /* every other thread; NULL or count 0: none */
    const struct index_snapshot *snapshot; /* the modules; NULL: an empty module list */
};

/* Write the minidump to FD (a regular file, written by position from
 * offset 0). Every stream is tried: one that fails is left out of the
 * directory and the others stay usable. Returns 0, or -errno if the file
 * could not be written (the header, the directory, a write error).
 * errno is preserved. Signal-safe: raw syscalls, mmap'd scratch memory. */
int minidump_write(int fd, const struct minidump_input *input);

#endif
