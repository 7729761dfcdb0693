/* capture.h: internal entry points of the capture module. */
#ifndef EXECINFO_EX_CAPTURE_H
#define EXECINFO_EX_CAPTURE_H

/* backtrace() under its internal name. Signal-safe. */
int capture_backtrace(void **buffer, int size);

#endif
