/* cache_policy.c: choose libunwind's caching policy once, at load.
 * World: normal.
 *
 * libunwind's default global cache takes a mutex with every signal blocked
 * (two sigprocmask calls per frame) and would deadlock a handler that
 * unwinds while its own thread holds it; the per-thread cache takes none. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "capture.h"

void capture_use_per_thread_cache(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}
