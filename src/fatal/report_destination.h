/* report_destination.h: where a crash report or a dump is written. */
#ifndef EXECINFO_EX_REPORT_DESTINATION_H
#define EXECINFO_EX_REPORT_DESTINATION_H

#include "../base/options.h"
#include "../base/text_out.h"

struct report_destination {
    int fd;
    int is_file;                     /* ours to close */
    char path[OPTIONS_PATH_MAX + 32];/* report= with %p expanded */
};

/* Open report=, or stderr. Signal-safe. */
void report_destination_open(struct report_destination *destination,
                             const struct options *options);

/* Send OUT to stderr, after a line saying so, when a write to the file
 * fails. Signal-safe. */
void report_destination_fall_back(struct report_destination *destination, struct text_out *out);

void report_destination_close(struct report_destination *destination);

#endif
