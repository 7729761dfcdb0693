/* input.c: open the tool's input once, after checking what it is.
 * World: normal (stdio).
 *
 * A path is stat'ed before it is opened, so a device is never opened; the
 * opened file is checked again (the path may have changed in between).
 * A FIFO is opened blocking, as cat opens it: it waits for its writer. */
#define _GNU_SOURCE
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* 0 if MODE may be read as an input, else -EISDIR or -EINVAL. */
static int check_kind(struct input *input, mode_t mode)
{
    if (S_ISREG(mode) || S_ISFIFO(mode))
        return 0;
    if (S_ISDIR(mode))
        return -EISDIR;
    input->refused_kind = kind_of(mode);
    return -EINVAL;
}

static int open_path(struct input *input, const char *path, struct stat *status)
{
    if (stat(path, status) != 0)
        return -errno;
    int result = check_kind(input, status->st_mode);
    if (result < 0)
        return result;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, status) != 0 || (result = check_kind(input, status->st_mode)) < 0) {
        result = result < 0 ? result : -errno;
        close(fd);
        return result;
    }
    errno = 0;
    input->file = fdopen(fd, "r");
    if (input->file == NULL) {
        result = errno ? -errno : -ENOMEM;
        close(fd);
        return result;
    }
    return 0;
}

static int read_head(struct input *input)
{
    input->head_length = fread(input->head, 1, sizeof input->head, input->file);
    if (input->head_length < sizeof input->head && ferror(input->file))
        return errno ? -errno : -EIO;
    return 0;
}

int input_open(struct input *input, const char *path)
{
    struct stat status;
    int is_stdin = strcmp(path, "-") == 0;

    memset(input, 0, sizeof *input);
    input->path = path;
    input->name = is_stdin ? "<stdin>" : path;
    int result = 0;
    if (is_stdin) /* whatever it is: the user chose it */
        input->file = stdin;
    else
        result = open_path(input, path, &status);
    if (result < 0)
        return result;
    if (fstat(fileno(input->file), &status) == 0 && S_ISREG(status.st_mode))
        input->size = (uint64_t)status.st_size;
    result = read_head(input);
    if (result < 0)
        input_close(input);
    return result;
}

void input_close(struct input *input)
{
    if (input->file != NULL && input->file != stdin)
        fclose(input->file);
    input->file = NULL;
}
