/* demangle.h: readable names for C++ and Rust symbols, made when a module
 * is indexed (the signal-safe calls only read what this stored). */
#ifndef EXECINFO_EX_DEMANGLE_H
#define EXECINFO_EX_DEMANGLE_H

#include <stddef.h>

/* Longer mangled names stay mangled. libiberty's Itanium demangler keeps
 * its arrays on the stack (some 100 bytes per byte of name) and refuses
 * names over 1024 bytes itself, as c++filt does (GCC PR 87675); this bound
 * is for the Rust demanglers. Of the 350,000 exported C++ names of this
 * Debian 12 machine's libraries (LLVM's included), the longest has 1042
 * bytes, one in a thousand more than 370. */
#define DEMANGLE_INPUT_MAX 2048
/* A demangled name longer than this is not stored: the name stays
 * mangled (a cut C++ name would read as another one). */
#define DEMANGLE_OUTPUT_MAX 4096

/* Write the demangled form of NAME (NUL-terminated) into TO, which holds
 * DEMANGLE_OUTPUT_MAX + 1 bytes, and return its length; 0 when NAME is
 * not a mangled name (C++ Itanium "_Z", Rust legacy or v0 "_R"), is
 * longer than DEMANGLE_INPUT_MAX, is malformed, or demangles to more than
 * DEMANGLE_OUTPUT_MAX bytes. The output is what c++filt writes. Never
 * allocates. Normal world (it may use a few hundred KiB of stack). */
size_t demangle_name(const char *name, char *to);

#endif
