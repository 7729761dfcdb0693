/* heap_profile.c: heap profiles written to a file: at exit (profile=),
 * and now (backtrace_heap_profile).
 * World: normal (the facts are gathered with malloc, the pprof file is
 * gzipped with zlib).
 *
 * A profile is written under a temporary name beside PATH and renamed
 * over it when complete, so that a viewer never reads half of one and a
 * profile of the previous run is replaced, as a profiler's output is. */
#define _GNU_SOURCE
#include "heap.h"
#include "heap_profile.h"
#include "profile_render.h"
#include "../base/path_pattern.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int render(const struct heap_profile *profile, int fd, const struct options *options)
{
    if (options->profile_format == PROFILE_FORMAT_FOLDED)
        return profile_write_folded(profile, fd, (enum profile_value)options->profile_sample);
    return profile_write_pprof(profile, fd, 1);
}

int heap_profile_write(const char *pattern, const struct options *options)
{
    char path[4096], temporary[4096 + 32];
    if (path_pattern_expand(pattern, getpid(), path, sizeof path) < 0)
        return -ENAMETOOLONG;
    /* Its own name for each writer: a dump's thread may write while the
     * program calls backtrace_heap_profile, or exits. */
    static _Atomic unsigned writers;
    snprintf(temporary, sizeof temporary, "%s.%d.%u.tmp", path, (int)getpid(),
             atomic_fetch_add(&writers, 1));
    struct heap_profile profile;
    int result = profile_facts_gather(&profile);
    if (result < 0)
        return result;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        result = -errno;
    } else {
        result = render(&profile, fd, options);
        if (close(fd) != 0 && result == 0)
            result = -errno;
        if (result == 0 && rename(temporary, path) != 0)
            result = -errno;
        if (result < 0)
            unlink(temporary);
    }
    profile_facts_free(&profile);
    return result;
}

__attribute__((visibility("default")))
int backtrace_heap_profile(const char *path)
{
    if (path == NULL || path[0] == '\0') {
        errno = EINVAL;
        return -1;
    }
    if (!heap_ready()) {
        errno = ENOSYS;
        return -1;
    }
    int saved_errno = errno;
    heap_busy++;
    int result = heap_profile_write(path, &heap.options);
    heap_busy--;
    if (result < 0) {
        errno = -result;
        return -1;
    }
    errno = saved_errno;
    return 0;
}

void heap_profile_write_and_tell(void)
{
    int result = heap_profile_write(heap.options.profile, &heap.options);
    char path[4096];
    if (path_pattern_expand(heap.options.profile, getpid(), path, sizeof path) < 0)
        snprintf(path, sizeof path, "%s", heap.options.profile);
    if (result == 0)
        fprintf(stderr, "execinfo_ex heap profile: %s\n", path);
    else
        fprintf(stderr, "execinfo_ex: cannot write the heap profile to %s: %s\n", path,
                strerror(-result));
}

/* After the program's atexit handlers and the destructors of the modules
 * loaded after ours, as exit_check.c's check: what is still live then is
 * what the in-use samples show. */
__attribute__((destructor))
static void write_profile_at_exit(void)
{
    if (!heap.recording || heap.options.profile[0] == '\0')
        return;
    heap_busy++;
    /* What the program freed goes back to the kernel first: glibc keeps
     * it, and the write's own pages (the index files it names frames
     * with, zlib, its tables) would come on top and set a new peak. At
     * exit, nothing is left to gain from keeping free memory. */
    malloc_trim(0);
    heap_profile_write_and_tell();
    heap_busy--;
}
