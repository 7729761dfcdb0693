/* index_light.h: whether loads may leave modules unread (issue 26). */
#ifndef EXECINFO_EX_INDEX_LIGHT_H
#define EXECINFO_EX_INDEX_LIGHT_H

/* 1 when nothing in the process but the crash handler reads the index
 * from a signal-safe call: the core library is only preloaded (no module
 * but the hooks library lists it in DT_NEEDED, and it is not linked into
 * the program), and the hooks library, if loaded, runs with HEAP 0. Then
 * a module without a warm cache file need not be read at load: the
 * handler names it from its file and the second stage. Else 0: the
 * signal-safe calls of a program that links us (print_trace,
 * backtrace_print_fd...) and the hooks library's reports need the whole
 * index, as before. Normal world (dl_iterate_phdr). */
int index_light_allowed(int heap);

#endif
