/* minidump_path.h: where minidump=PATH puts a crash's minidump, written
 * under a temporary name and renamed when complete. */
#ifndef EXECINFO_EX_MINIDUMP_PATH_H
#define EXECINFO_EX_MINIDUMP_PATH_H

#include "minidump.h"

#define MINIDUMP_PATH_MAX 1024

struct minidump_outcome {
    char path[MINIDUMP_PATH_MAX]; /* the file written, or the one that could not be */
    int error;                    /* 0: written; else a negative errno */
};

/* Write INPUT's minidump where OPTION says: a file (each %p the process
 * id, %% a %), or an existing directory, in which the file is named
 * PROGRAM-PID-YYYYMMDDTHHMMSSZ.dmp (PROGRAM: the basename of
 * /proc/self/exe; the time: the crash's, UTC). The file is written as
 * .NAME.PID.tmp in the same directory and renamed to NAME with
 * renameat2(RENAME_NOREPLACE): a complete file or none, and never over
 * an existing one. On failure no file is left and OUTCOME says which path
 * and why. errno is preserved. Signal-safe. */
void minidump_write_to_path(const char *option, const struct minidump_input *input,
                            struct minidump_outcome *outcome);

/* PROGRAM-PID-YYYYMMDDTHHMMSSZ.dmp into OUT (CAPACITY bytes) for PROGRAM
 * (a path: its basename is taken). Returns 0 or -ENAMETOOLONG. Signal-safe. */
int minidump_file_name(const char *program, pid_t pid, int64_t seconds, char *out,
                       size_t capacity);

#endif
