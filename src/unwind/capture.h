/* capture.h: internal entry points of the capture module. */
#ifndef EXECINFO_EX_CAPTURE_H
#define EXECINFO_EX_CAPTURE_H

/* Switch libunwind's local address space to per-thread caching (no mutex,
 * no sigprocmask per frame). Normal world; called once at load. */
void capture_use_per_thread_cache(void);

/* backtrace() under its internal name. Signal-safe. */
int capture_backtrace(void **buffer, int size);

#endif
