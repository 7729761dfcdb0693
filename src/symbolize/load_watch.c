/* load_watch.c: dlopen, dlmopen and dlclose, interposed so that the symbol
 * index is brought up to date as soon as one of them has changed the set
 * of loaded modules (docs/DECISIONS.md, "Modules loaded after start-up").
 * World: normal (dlinfo, malloc, the index build). Linked into the shared
 * library only: a static link cannot interpose libc's dlopen, so there the
 * program calls backtrace_refresh_index().
 *
 * The result and errno of every call are libc's own. The refresh runs
 * only when the call succeeded, so dlerror() is untouched after a failure.
 *
 * glibc's dlopen looks at its return address to find the calling module:
 * a name without '/' is searched along that module's RPATH/RUNPATH, and
 * $ORIGIN is that module's directory. A call made from this library would
 * search along ours. So the entry (assembly, below) first asks
 * load_watch_route() whether the caller's module would search exactly as
 * ours does; if not, it jumps straight to libc's function with the
 * caller's return address in place (the new modules are then indexed at
 * the next refresh), else to a wrapper that calls libc and refreshes. */
#define _GNU_SOURCE
#include "index.h"
#include "../base/jump_entry.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef void *open_function(const char *, int);
typedef void *mopen_function(Lmid_t, const char *, int);
typedef int close_function(void *);

enum { OPEN, MOPEN, CLOSE, FUNCTIONS };

static _Atomic(void *) next_functions[FUNCTIONS];

/* libc's definition: the default version (GLIBC_2.34 in libc.so.6 since
 * glibc 2.34, where the compatibility GLIBC_2.2.5 one is the same code);
 * found on first use, as thread_start.c finds pthread_create. RTLD_NEXT
 * searches the objects after ours only: when we come after libc (a
 * dependency of the preloaded hooks library, load_watch_forward.c),
 * libc's is found from the start, where a versioned lookup passes over
 * unversioned definitions such as ours. */
static void *find_next(const char *name, const char *version)
{
    void *next = dlvsym(RTLD_NEXT, name, version);
    if (next == NULL)
        next = dlvsym(RTLD_DEFAULT, name, version);
    return next != NULL ? next : dlsym(RTLD_NEXT, name);
}

/* libc's dlopen (WHICH OPEN), dlmopen or dlclose, found once. */
static void *next_function(int which)
{
    static const char *const names[FUNCTIONS] = { "dlopen", "dlmopen", "dlclose" };
    void *next = atomic_load(&next_functions[which]);
    if (next == NULL) {
        next = find_next(names[which], "GLIBC_2.34");
        atomic_store(&next_functions[which], next);
    }
    return next;
}

static open_function *find_next_open(void)
{
    return (open_function *)next_function(OPEN);
}

static mopen_function *find_next_mopen(void)
{
    return (mopen_function *)next_function(MOPEN);
}

static close_function *find_next_close(void)
{
    return (close_function *)next_function(CLOSE);
}

/* The directories the loader would search for a name opened from MAP, in
 * order (dlinfo's RTLD_DI_SERINFO: RPATHs, LD_LIBRARY_PATH, RUNPATH, the
 * system directories; ld.so.cache, consulted before the last, is the same
 * for every caller). NULL if it cannot be told; free() it. */
static Dl_serinfo *search_list(void *map)
{
    Dl_serinfo size;
    if (dlinfo(map, RTLD_DI_SERINFOSIZE, &size) != 0)
        return NULL;
    Dl_serinfo *list = malloc(size.dls_size);
    if (list == NULL)
        return NULL;
    list->dls_size = size.dls_size;
    list->dls_cnt = size.dls_cnt;
    if (dlinfo(map, RTLD_DI_SERINFO, list) != 0) {
        free(list);
        return NULL;
    }
    return list;
}

/* Whether entry I of LIST names a directory that an earlier entry named:
 * the loader searches it twice with the same result, so it does not count
 * (our list has the program's DT_RPATH twice, once as our loader's). */
static int seen_before(const Dl_serinfo *list, unsigned i)
{
    for (unsigned j = 0; j < i; j++)
        if (strcmp(list->dls_serpath[j].dls_name, list->dls_serpath[i].dls_name) == 0)
            return 1;
    return 0;
}

/* The next entry of LIST from *AT that counts, or -1. */
static int next_counted(const Dl_serinfo *list, unsigned *at)
{
    while (*at < list->dls_cnt && seen_before(list, *at))
        ++*at;
    return *at < list->dls_cnt ? (int)(*at)++ : -1;
}

/* dlopen opens in the caller's namespace. */
static int same_namespace(void *caller_map, void *our_map)
{
    Lmid_t caller_space, our_space;
    return dlinfo(caller_map, RTLD_DI_LMID, &caller_space) == 0 &&
           dlinfo(our_map, RTLD_DI_LMID, &our_space) == 0 && caller_space == our_space;
}

static int same_search(void *caller_map, void *our_map)
{
    Dl_serinfo *caller = search_list(caller_map), *ours = search_list(our_map);
    int same = caller != NULL && ours != NULL;
    unsigned at_caller = 0, at_ours = 0;
    while (same) {
        int a = next_counted(caller, &at_caller), b = next_counted(ours, &at_ours);
        if (a < 0 || b < 0) {
            same = a == b;
            break;
        }
        same = caller->dls_serpath[a].dls_flags == ours->dls_serpath[b].dls_flags &&
               strcmp(caller->dls_serpath[a].dls_name, ours->dls_serpath[b].dls_name) == 0;
    }
    free(caller);
    free(ours);
    return same;
}

static struct link_map *module_of(const void *address)
{
    struct dl_find_object found;
    return _dl_find_object((void *)address, &found) == 0 ? found.dlfo_link_map : NULL;
}

/* Whether libc would open FILE, asked from CALLER, exactly as when asked
 * from this library. */
static int caller_does_not_matter(const char *file, const void *caller)
{
    if (file == NULL)
        return 1; /* the program itself */
    if (strchr(file, '$') != NULL)
        return 0; /* $ORIGIN: the caller's directory */
    struct link_map *caller_map = module_of(caller);
    struct link_map *our_map = module_of((const void *)caller_does_not_matter);
    if (caller_map == NULL || our_map == NULL)
        return 0;
    if (caller_map == our_map)
        return 1;
    if (!same_namespace(caller_map, our_map))
        return 0;
    /* A path: only the namespace counts; a bare name, the search too. */
    return strchr(file, '/') != NULL || same_search(caller_map, our_map);
}

static void refresh_keeping_errno(void)
{
    int saved = errno;
    (void)index_refresh_after_load(); /* a failure only leaves names out */
    errno = saved;
}

static void *open_then_refresh(const char *file, int mode)
{
    void *handle = find_next_open()(file, mode);
    if (handle != NULL)
        refresh_keeping_errno();
    return handle;
}

static void *mopen_then_refresh(Lmid_t space, const char *file, int mode)
{
    void *handle = find_next_mopen()(space, file, mode);
    if (handle != NULL)
        refresh_keeping_errno();
    return handle;
}

/* Where the entry of dlopen (WHICH 0: file is its first argument) or
 * dlmopen (1: its second) goes on. */
__attribute__((used, visibility("hidden")))
void *load_watch_route(const struct jump_entry_call *call, int which)
{
    const char *file = (const char *)call->arguments[which == 0 ? 0 : 1];
    const void *caller = call->return_address;
    int saved = errno;
    void *next = which == 0 ? (void *)find_next_open() : (void *)find_next_mopen();
    void *route = next;
    if (next != NULL && caller_does_not_matter(file, caller))
        route = which == 0 ? (void *)open_then_refresh : (void *)mopen_then_refresh;
    errno = saved;
    return route;
}

/* Not found (no libc dlopen, which cannot happen with glibc 2.34+): fail
 * as dlopen does, without a message. */
__attribute__((used, visibility("hidden")))
void *load_watch_unavailable(void)
{
    return NULL;
}

/* dlopen(file, mode) and dlmopen(space, file, mode): routed by the file
 * and the caller's return address, then a jump, so that the function
 * jumped to sees the caller's return address as its own (jump_entry.h). */
JUMP_ENTRY(dlopen, load_watch_route, 0, load_watch_unavailable);
JUMP_ENTRY(dlmopen, load_watch_route, 1, load_watch_unavailable);

/* An unloaded module must not lend its names to whatever is mapped where
 * it was: the index forgets it as soon as dlclose returns. */
__attribute__((visibility("default")))
int dlclose(void *handle)
{
    close_function *next = find_next_close();
    if (next == NULL)
        return -1;
    int result = next(handle);
    if (result == 0)
        refresh_keeping_errno();
    return result;
}
