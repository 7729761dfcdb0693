/* report_file.h: open a report file from a signal handler, never waiting. */
#ifndef EXECINFO_EX_REPORT_FILE_H
#define EXECINFO_EX_REPORT_FILE_H

/* Open PATH with FLAGS (O_WRONLY and the caller's O_CREAT, O_EXCL,
 * O_APPEND, O_NOFOLLOW...; mode 0600 when created) for a report. The open
 * itself has O_NONBLOCK, so a FIFO without reader or a device cannot make
 * it wait; what was opened must be a regular file (and with OURS_ONLY
 * one owned by the effective user with no other name), else it is closed
 * again; then O_NONBLOCK is cleared. Returns the fd, or a negative errno
 * code (-ENXIO for a FIFO without reader, -EINVAL for a file that is not
 * regular, -EPERM for one that is not ours). Signal-safe. */
int report_file_open(const char *path, int flags, int ours_only);

#endif
