/* capture.c: backtrace() and backtrace_ucontext() on libunwind.
 * World: signal-safe.
 *
 * backtrace() is a tail call into libunwind's cached fast trace
 * (unw_backtrace, a few ns a frame warm), whose first entry is the return
 * address of its own caller: as a tail call that is our caller, which is
 * glibc's contract. tests/unit/test_capture.c checks that frame 0 is the
 * caller, so a compiler that stops emitting the tail call is caught.
 *
 * The unwinder runs with libunwind's per-thread cache (cache_policy.c), so
 * that it takes no mutex. On a cache miss libunwind still calls
 * dl_iterate_phdr (the loader lock, recursive): see docs/SIGNAL_SAFETY.md. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "capture.h"
#include "execinfo_ex.h"

#include <errno.h>
#include <stdint.h>

int capture_backtrace(void **buffer, int size)
{
    if (size <= 0 || buffer == NULL)
        return 0;
    return unw_backtrace(buffer, size);
}

/* The public name is an alias, so that calls from inside the library do
 * not go through the PLT to whatever backtrace a program interposes. */
__attribute__((visibility("default"), alias("capture_backtrace")))
int backtrace(void **buffer, int size);

__attribute__((visibility("default")))
int backtrace_ucontext(void **buffer, int size, const void *ucontext)
{
    int saved_errno = errno;
    unw_cursor_t cursor;
    int count = 0;

    if (size <= 0 || buffer == NULL || ucontext == NULL)
        return 0;
    /* On x86_64 and aarch64 Linux, unw_context_t is the kernel's ucontext_t. */
    if (unw_init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) < 0) {
        errno = saved_errno;
        return 0;
    }
    do {
        unw_word_t ip;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        buffer[count++] = (void *)(uintptr_t)ip;
    } while (count < size && unw_step(&cursor) > 0);
    errno = saved_errno;
    return count;
}
