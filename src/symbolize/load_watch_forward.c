/* load_watch_forward.c: dlmopen and dlclose of the hooks library, passed
 * on to the core library's (load_watch.c); its dlopen is
 * src/hooks/dlopen_deepbind.c, which does the same.
 * World: normal. Linked into libexecinfo_ex_hooks.so only.
 *
 * Preloaded alone (LD_PRELOAD=libexecinfo_ex_hooks.so), the hooks library
 * comes before libc in the search order, but its dependency
 * libexecinfo_ex.so comes after libc: without these definitions the
 * program's dlmopen and dlclose would be libc's, and the index would not
 * follow the modules they load and unload. dlmopen's entry jumps, so that
 * the core's entry still finds the caller's return address where it
 * looks for it. */
#define _GNU_SOURCE
#include "../base/jump_entry.h"
#include "execinfo_ex.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>

enum { MOPEN, CLOSE, FUNCTIONS };

static _Atomic(void *) core_functions[FUNCTIONS];

/* The core library's handle: its link map will not do for dlsym (a
 * dependency has no search list of its own until it is dlopen'd). */
static void *core_handle(void)
{
    typedef void *open_function(const char *, int);
    open_function *libc_open = (open_function *)dlvsym(RTLD_DEFAULT, "dlopen", "GLIBC_2.34");
    struct dl_find_object core;
    if (libc_open == NULL || _dl_find_object((void *)backtrace_refresh_index, &core) != 0)
        return NULL;
    return libc_open(core.dlfo_link_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
}

/* The core library's definition of dlmopen (WHICH MOPEN) or dlclose;
 * libc's if it cannot be found (then nothing is refreshed, as without
 * us). */
__attribute__((used, visibility("hidden")))
void *load_watch_core_function(int which)
{
    static const char *const names[FUNCTIONS] = { "dlmopen", "dlclose" };
    void *function = atomic_load(&core_functions[which]);
    if (function == NULL) {
        void *core = core_handle(); /* kept: the core is loaded for good anyway */
        if (core != NULL)
            function = dlsym(core, names[which]);
        if (function == NULL)
            function = dlsym(RTLD_NEXT, names[which]);
        atomic_store(&core_functions[which], function);
    }
    return function;
}

__attribute__((used, visibility("hidden")))
void *load_watch_forward_unavailable(void)
{
    return NULL;
}

__attribute__((used, visibility("hidden")))
void *load_watch_forward_route(const struct jump_entry_call *call, int which)
{
    (void)call;
    return load_watch_core_function(which);
}

/* dlmopen goes on to the core's (jump_entry.h), so that its entry still
 * finds the caller's return address where it looks for it. 0 is MOPEN
 * (the assembly takes a number; until issue 27 it passed 1, CLOSE, and
 * sent dlmopen to dlclose). */
_Static_assert(MOPEN == 0, "JUMP_ENTRY's WHICH below is MOPEN");
JUMP_ENTRY(dlmopen, load_watch_forward_route, 0, load_watch_forward_unavailable);

__attribute__((visibility("default")))
int dlclose(void *handle)
{
    int (*next)(void *) = (int (*)(void *))load_watch_core_function(CLOSE);
    return next != NULL ? next(handle) : -1;
}
