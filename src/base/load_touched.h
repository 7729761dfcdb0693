/* load_touched.h: where to keep a small variable that every process
 * writes at load.
 *
 * In .data, not .bss: the loader's relocations have made .data's pages
 * private already, where each page of .bss is a page fault at its first
 * write, and a small variable of .bss sits on a page of its own among
 * the large arrays (the crash's scratch, the reserves), which are touched
 * only when used. Issue 26: 6 of the 8 pages of .bss a preloaded
 * /bin/true touched held one such variable each; then the once-controls,
 * mutexes and flags the load reads before it writes them (a read of a
 * fresh page maps the zero page, the write then copies it: two faults
 * each), 6 faults more. */
#ifndef EXECINFO_EX_LOAD_TOUCHED_H
#define EXECINFO_EX_LOAD_TOUCHED_H

#define LOAD_TOUCHED __attribute__((section(".data.load_touched")))

#endif
