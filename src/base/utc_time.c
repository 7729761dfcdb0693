/* utc_time.c: calendar arithmetic for reports (gmtime_r may take the tz lock).
 * World: signal-safe (pure). The days-to-date step is Howard Hinnant's
 * civil_from_days. */
#include "utc_time.h"

static void put_digits(char *out, unsigned value, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        out[i] = (char)('0' + value % 10);
        value /= 10;
    }
}

void utc_time_format(int64_t seconds, long nanoseconds, char out[32])
{
    int64_t days = seconds / 86400, rest = seconds % 86400;
    if (rest < 0) {
        rest += 86400;
        days--;
    }
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    unsigned day_of_era = (unsigned)(days - era * 146097);
    unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t year = (int64_t)year_of_era + era * 400;
    unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    unsigned month_index = (5 * day_of_year + 2) / 153;
    unsigned day = day_of_year - (153 * month_index + 2) / 5 + 1;
    unsigned month = month_index < 10 ? month_index + 3 : month_index - 9;
    year += month <= 2;
    if (year < 0 || year > 9999)
        year = 0;
    put_digits(out, (unsigned)year, 4);
    out[4] = '-';
    put_digits(out + 5, month, 2);
    out[7] = '-';
    put_digits(out + 8, day, 2);
    out[10] = 'T';
    put_digits(out + 11, (unsigned)(rest / 3600), 2);
    out[13] = ':';
    put_digits(out + 14, (unsigned)(rest / 60 % 60), 2);
    out[16] = ':';
    put_digits(out + 17, (unsigned)(rest % 60), 2);
    out[19] = '.';
    put_digits(out + 20, (unsigned)(nanoseconds / 1000000 % 1000), 3);
    out[23] = 'Z';
    out[24] = '\0';
}
