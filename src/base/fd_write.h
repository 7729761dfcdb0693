/* fd_write.h: write all of a buffer to an fd from any context. */
#ifndef EXECINFO_EX_FD_WRITE_H
#define EXECINFO_EX_FD_WRITE_H

#include <stddef.h>

/* Write LENGTH bytes of DATA to FD, looping over partial writes and EINTR.
 * A pipe without reader does not raise SIGPIPE, nor a file at its
 * RLIMIT_FSIZE SIGXFSZ. Returns 0, or a negative errno code (-EBADF,
 * -ENOSPC, -EPIPE, -EFBIG...) when the fd refused the rest.
 * errno is preserved. Signal-safe. */
int fd_write_all(int fd, const char *data, size_t length);

#endif
