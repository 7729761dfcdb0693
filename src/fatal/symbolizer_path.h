/* symbolizer_path.h: where the second stage's program is, found at
 * install (the handler cannot look). */
#ifndef EXECINFO_EX_SYMBOLIZER_PATH_H
#define EXECINFO_EX_SYMBOLIZER_PATH_H

#include <stddef.h>

/* The first executable of: bin/execinfo_ex_symbolize beside the file that
 * holds this library (the build tree: build/ and build/bin/), then
 * ../bin/ from it (a program linked with the static library, in a folder
 * beside bin/), then BINDIR/execinfo_ex_symbolize (the install). "" when
 * none is there. Normal world (dladdr). */
void symbolizer_path_find(char *path, size_t size);

#endif
