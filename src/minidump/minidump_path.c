/* minidump_path.c: the minidump's file: the name, the temporary file in
 * the same directory, the rename that makes it visible only when it is
 * complete and never over another file.
 * World: signal-safe (openat, renameat2, linkat, unlinkat by their
 * syscalls; the path formatted by hand). */
#define _GNU_SOURCE
#include "minidump_path.h"
#include "../base/path_pattern.h"
#include "../base/text_out.h"
#include "../base/utc_time.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME_MAX_BYTES 256

struct name_builder {
    char *out;
    size_t used, capacity;
    int overflow;
};

static void put(struct name_builder *name, const char *text, size_t length)
{
    if (name->used + length >= name->capacity) {
        name->overflow = 1;
        return;
    }
    memcpy(name->out + name->used, text, length);
    name->used += length;
    name->out[name->used] = '\0';
}

static void put_string(struct name_builder *name, const char *text)
{
    put(name, text, strlen(text));
}

static void put_decimal(struct name_builder *name, uint64_t value)
{
    char digits[72];
    put(name, digits, format_unsigned(digits, value, 10));
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

int minidump_file_name(const char *program, pid_t pid, int64_t seconds, char *out,
                       size_t capacity)
{
    static const unsigned char digits_of_time[] = { 0, 1, 2, 3, 5, 6, 8, 9, 10, 11, 12, 14, 15, 17, 18 };
    struct name_builder name = { out, 0, capacity, capacity == 0 };
    char iso[32], compact[sizeof digits_of_time + 2];
    const char *base = base_name(program);
    if (capacity > 0)
        out[0] = '\0';
    utc_time_format(seconds, 0, iso); /* 2026-12-02T19:40:00.000Z */
    for (size_t i = 0; i < sizeof digits_of_time; i++)
        compact[i] = iso[digits_of_time[i]];
    compact[sizeof digits_of_time] = 'Z';
    compact[sizeof digits_of_time + 1] = '\0';
    put_string(&name, base[0] != '\0' ? base : "program");
    put_string(&name, "-");
    put_decimal(&name, (uint64_t)pid);
    put_string(&name, "-");
    put_string(&name, compact);
    put_string(&name, ".dmp");
    return name.overflow ? -ENAMETOOLONG : 0;
}

static int sys_result(long value)
{
    return value < 0 ? -errno : (int)value;
}

/* O_PATH: a directory we may write in but not list is still one. */
static int open_directory(const char *path)
{
    return sys_result(syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC));
}

/* Rename without replacing; where the file system has no RENAME_NOREPLACE
 * (EINVAL), a hard link does the same, then the temporary name goes. */
static int rename_no_replace(int directory, const char *from, const char *to)
{
    int result = sys_result(syscall(SYS_renameat2, directory, from, directory, to, RENAME_NOREPLACE));
    if (result != -EINVAL)
        return result;
    result = sys_result(syscall(SYS_linkat, directory, from, directory, to, 0));
    if (result == 0)
        syscall(SYS_unlinkat, directory, from, 0);
    return result;
}

/* In DIRECTORY: .NAME.PID.tmp, written, then renamed to NAME. */
static int write_in(int directory, const char *name, const struct minidump_input *input)
{
    char temporary[NAME_MAX_BYTES + 32];
    struct name_builder builder = { temporary, 0, sizeof temporary, 0 };
    put_string(&builder, ".");
    put_string(&builder, name);
    put_string(&builder, ".");
    put_decimal(&builder, (uint64_t)getpid());
    put_string(&builder, ".tmp");
    if (builder.overflow || strlen(name) >= NAME_MAX_BYTES)
        return -ENAMETOOLONG;
    int fd = sys_result(syscall(SYS_openat, directory, temporary,
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd < 0)
        return fd;
    int result = minidump_write(fd, input);
    if (close(fd) != 0 && result == 0)
        result = -errno;
    if (result == 0)
        result = rename_no_replace(directory, temporary, name);
    if (result < 0)
        syscall(SYS_unlinkat, directory, temporary, 0);
    return result;
}

/* DIRECTORY/NAME, or a file path split at its last slash. */
static int resolve(const char *expanded, const struct crash_facts *crash, int *directory,
                   struct minidump_outcome *outcome, const char **name)
{
    struct name_builder path = { outcome->path, 0, sizeof outcome->path, 0 };
    char file_name[NAME_MAX_BYTES];
    int fd = open_directory(expanded);
    if (fd >= 0) {
        int result = minidump_file_name(crash->program, crash->pid, crash->time_seconds,
                                        file_name, sizeof file_name);
        put_string(&path, expanded);
        if (path.used > 0 && outcome->path[path.used - 1] != '/')
            put_string(&path, "/");
        size_t name_start = path.used;
        put_string(&path, file_name);
        *directory = fd;
        *name = outcome->path + name_start;
        return result < 0 || path.overflow ? -ENAMETOOLONG : 0;
    }
    put_string(&path, expanded);
    const char *slash = strrchr(outcome->path, '/');
    if (path.overflow || slash == NULL || slash[1] == '\0')
        return path.overflow ? -ENAMETOOLONG : -EINVAL;
    char parent[MINIDUMP_PATH_MAX];
    size_t parent_length = slash == outcome->path ? 1 : (size_t)(slash - outcome->path);
    memcpy(parent, outcome->path, parent_length);
    parent[parent_length] = '\0';
    *directory = open_directory(parent);
    *name = slash + 1;
    return *directory < 0 ? *directory : 0;
}

void minidump_write_to_path(const char *option, const struct minidump_input *input,
                            struct minidump_outcome *outcome)
{
    int saved_errno = errno, directory = -1;
    char expanded[MINIDUMP_PATH_MAX];
    const char *name = NULL;
    outcome->path[0] = '\0';
    outcome->error = path_pattern_expand(option, input->crash->pid, expanded, sizeof expanded);
    if (outcome->error < 0) {
        memcpy(outcome->path, "?", 2);
    } else {
        outcome->error = resolve(expanded, input->crash, &directory, outcome, &name);
        if (outcome->error == 0)
            outcome->error = write_in(directory, name, input);
        if (outcome->path[0] == '\0')
            memcpy(outcome->path, expanded, strlen(expanded) + 1);
    }
    if (directory >= 0)
        close(directory);
    errno = saved_errno;
}
