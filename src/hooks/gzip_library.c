/* gzip_library.c: zlib, loaded at the first gzipped profile.
 * World: normal (dlopen, dlsym, pthread_once). Its callers write profiles
 * at exit, from backtrace_heap_profile or on the dump thread; a signal
 * handler only wakes that thread (profile_dump_signal.c).
 *
 * Linked, libz was mapped and relocated in every process the hooks
 * library was preloaded into, whether it ever wrote a profile or not:
 * 36 KiB of resident pages from the start, the whole run long
 * (docs/PERFORMANCE.md, "The profiler's peak RSS"). The library is
 * opened with libc's dlopen, not the core library's (load_watch.c), which
 * would refresh the symbol index for it, as elf_libraries.c does for
 * libelf and libdw. */
#define _GNU_SOURCE
#include "gzip_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static pthread_once_t loaded = PTHREAD_ONCE_INIT;
static struct gzip_library library;
static int available;

static void *open_zlib(void)
{
    void *(*libc_dlopen)(const char *, int) =
        (void *(*)(const char *, int))dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.34");
    if (libc_dlopen == NULL)
        libc_dlopen = (void *(*)(const char *, int))dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.2.5");
    return libc_dlopen != NULL ? libc_dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL) : NULL;
}

static void load(void)
{
    void *zlib = open_zlib();
    if (zlib == NULL)
        return;
    *(void **)&library.deflate_init2 = dlsym(zlib, "deflateInit2_");
    *(void **)&library.deflate = dlsym(zlib, "deflate");
    *(void **)&library.deflate_end = dlsym(zlib, "deflateEnd");
    available = library.deflate_init2 != NULL && library.deflate != NULL &&
                library.deflate_end != NULL;
}

const struct gzip_library *gzip_library_load(void)
{
    pthread_once(&loaded, load);
    return available ? &library : NULL;
}
