/* input.h: the one file the tool reads, opened once and read once: a
 * regular file, a pipe (a FIFO, <(...), /dev/stdin on a pipe) or the
 * standard input ("-"). A device is refused before it is opened: it may
 * never end (/dev/zero) or act when opened. Its first bytes are read here
 * to tell a state blob from a trace; the reader that follows takes them
 * from INPUT_HEAD, so that nothing is read twice (a pipe cannot be). */
#ifndef EXECINFO_EX_LEAKS_INPUT_H
#define EXECINFO_EX_LEAKS_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define INPUT_HEAD_BYTES 8

struct input {
    FILE *file;
    const char *path;                      /* as given; "-": standard input */
    const char *name;                      /* for messages: the path, or "<stdin>" */
    uint64_t size;                         /* of a regular file; 0: unknown (a pipe) */
    unsigned char head[INPUT_HEAD_BYTES];  /* the first bytes, already read */
    size_t head_length;                    /* fewer than INPUT_HEAD_BYTES: the whole input */
    const char *refused_kind;              /* after -EINVAL: "a character device", ... */
};

/* Open PATH and read its first bytes. Returns 0; -EINVAL for a file that
 * is neither regular nor a pipe (REFUSED_KIND says what it is); -EISDIR;
 * -ENOMEM; or the -errno of stat, open or read. Normal world. */
int input_open(struct input *input, const char *path);

void input_close(struct input *input);

#endif
