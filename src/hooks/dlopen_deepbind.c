/* dlopen_deepbind.c: dlopen with RTLD_DEEPBIND, which would make a plugin
 * free our blocks with glibc's free.
 * World: normal (dlopen's own world: the loader, dlsym, stderr).
 *
 * A library opened with RTLD_DEEPBIND looks its symbols up in its own
 * dependencies first: its calls to free bind to glibc's, while blocks it
 * gets from libc (strdup, getline...) or from the program come from ours;
 * glibc's free then aborts ("munmap_chunk(): invalid pointer"). ASan
 * refuses the flag; tcmalloc and jemalloc document the same trap. Here the
 * flag is dropped, with a one-line warning, so that a correct plugin host
 * runs unchanged. With heap=0 our malloc is glibc's and the flag is kept.
 *
 * The call goes on to the next dlopen in lookup order, not straight to
 * libc's: the core library interposes dlopen too (it refreshes its symbol
 * index after a load), and both must run. The core library is asked
 * first, through its own handle, since with LD_PRELOAD it comes after
 * libc in the global order and RTLD_NEXT would skip it. */
#define _GNU_SOURCE
#include "heap.h"
#include "../base/fd_write.h"
#include "execinfo_ex.h"
#include "../base/jump_entry.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

typedef void *dlopen_function(const char *file, int mode);

static _Atomic(dlopen_function *) next_dlopen;

/* The core library's dlopen if it has one (dlsym on its handle finds its
 * own definition before its dependencies'), else the next one after us. */
static dlopen_function *find_next_dlopen(void)
{
    dlopen_function *after_us = (dlopen_function *)dlsym(RTLD_NEXT, "dlopen");
    dlopen_function *found = after_us;
    Dl_info core;
    if (after_us != NULL && dladdr((void *)backtrace_refresh_index, &core) != 0 &&
        core.dli_fname != NULL) {
        void *handle = after_us(core.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (handle != NULL) {
            dlopen_function *in_core = (dlopen_function *)dlsym(handle, "dlopen");
            if (in_core != NULL && in_core != (dlopen_function *)dlopen)
                found = in_core;
            dlclose(handle);
        }
    }
    return found;
}

static void warn_dropped(const char *file)
{
    static const char head[] = "*** execinfo_ex: dlopen(\"";
    static const char tail[] = "\", RTLD_DEEPBIND): the flag is dropped; with it the library "
                               "would free the heap hooks' blocks with glibc's free\n";
    fd_write_all(STDERR_FILENO, head, sizeof head - 1);
    fd_write_all(STDERR_FILENO, file, strnlen(file, 4096));
    fd_write_all(STDERR_FILENO, tail, sizeof tail - 1);
}

/* Where dlopen goes on, with the flag dropped from its saved mode (its
 * second argument) if need be. */
__attribute__((used, visibility("hidden")))
void *deepbind_route(struct jump_entry_call *call, int which)
{
    (void)which;
    const char *file = (const char *)call->arguments[0];
    int mode = (int)call->arguments[1];
    dlopen_function *next = atomic_load_explicit(&next_dlopen, memory_order_acquire);
    if (next == NULL) {
        next = find_next_dlopen();
        if (next == NULL)
            return NULL;
        atomic_store_explicit(&next_dlopen, next, memory_order_release);
    }
    if ((mode & RTLD_DEEPBIND) && heap_ready()) {
        warn_dropped(file != NULL ? file : "(null)");
        call->arguments[1] = (unsigned)(mode & ~RTLD_DEEPBIND);
    }
    return (void *)next;
}

__attribute__((used, visibility("hidden")))
void *deepbind_unavailable(void)
{
    return NULL;
}

/* dlopen(file, mode): route, then jump, so that the dlopen jumped to (the
 * core's, then glibc's) sees the caller's return address as its own:
 * glibc searches a bare name along its caller's RUNPATH and reads $ORIGIN
 * as its caller's directory (jump_entry.h). deepbind_route gets the mode
 * where the entry saved it, and may change it there. */
JUMP_ENTRY(dlopen, deepbind_route, 0, deepbind_unavailable);
