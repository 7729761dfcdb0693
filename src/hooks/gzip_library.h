/* gzip_library.h: zlib's deflate, loaded when a gzipped profile is first
 * written rather than with the hooks library. */
#ifndef EXECINFO_EX_GZIP_LIBRARY_H
#define EXECINFO_EX_GZIP_LIBRARY_H

#include <zlib.h>

/* The three calls of zlib that write a gzip stream. */
struct gzip_library {
    int (*deflate_init2)(z_streamp stream, int level, int method, int window_bits,
                         int memory_level, int strategy, const char *version, int stream_size);
    int (*deflate)(z_streamp stream, int flush);
    int (*deflate_end)(z_streamp stream);
};

/* zlib (libz.so.1), loaded at the first call and kept; NULL if it cannot
 * be loaded. World: normal (dlopen: never from a signal handler). */
const struct gzip_library *gzip_library_load(void);

#endif
