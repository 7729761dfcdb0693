/* symbolizer_path.c: the default symbolizer= (symbolizer_path.h).
 * World: normal (dladdr, access). */
#define _GNU_SOURCE
#include "symbolizer_path.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#ifndef EXECINFO_EX_BINDIR
#define EXECINFO_EX_BINDIR "/usr/local/bin"
#endif
#define PROGRAM_NAME "execinfo_ex_symbolize"

static int try_path(char *path, size_t size, const char *directory, size_t length,
                    const char *middle)
{
    size_t middle_length = strlen(middle), name_length = sizeof PROGRAM_NAME;
    if (length + middle_length + name_length > size)
        return 0;
    memmove(path, directory, length);
    memcpy(path + length, middle, middle_length);
    memcpy(path + length + middle_length, PROGRAM_NAME, name_length);
    return access(path, X_OK) == 0;
}

void symbolizer_path_find(char *path, size_t size)
{
    Dl_info info;
    if (size == 0)
        return;
    if (dladdr((void *)symbolizer_path_find, &info) != 0 && info.dli_fname != NULL &&
        info.dli_fname[0] == '/') {
        const char *slash = strrchr(info.dli_fname, '/');
        size_t length = (size_t)(slash - info.dli_fname) + 1;
        if (try_path(path, size, info.dli_fname, length, "bin/") ||
            try_path(path, size, info.dli_fname, length, "../bin/"))
            return;
    }
    if (try_path(path, size, EXECINFO_EX_BINDIR, strlen(EXECINFO_EX_BINDIR), "/"))
        return;
    path[0] = '\0';
}
