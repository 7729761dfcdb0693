/* utc_time.h: a Unix time as ISO 8601 UTC text, without locale or tz. */
#ifndef EXECINFO_EX_UTC_TIME_H
#define EXECINFO_EX_UTC_TIME_H

#include <stdint.h>

/* "2026-12-02T19:40:00.123Z" into OUT (>= 32 bytes). Signal-safe. */
void utc_time_format(int64_t seconds, long nanoseconds, char out[32]);

#endif
