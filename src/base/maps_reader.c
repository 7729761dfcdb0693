/* maps_reader.c: /proc/self/maps parsed with raw reads.
 * World: signal-safe. The kernel's view of the mappings needs no lock of
 * ours or the loader's. */
#define _GNU_SOURCE
#include "maps_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const char *parse_hex(const char *at, uintptr_t *value)
{
    uintptr_t result = 0;
    int digits = 0;
    for (;; at++, digits++) {
        char c = *at;
        if (c >= '0' && c <= '9') result = result * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f') result = result * 16 + (uintptr_t)(c - 'a' + 10);
        else break;
    }
    *value = result;
    return digits ? at : NULL;
}

static const char *skip_field(const char *at)
{
    while (*at == ' ')
        at++;
    while (*at != ' ' && *at != '\0')
        at++;
    return at;
}

/* "start-end perms offset dev inode   path" */
static int parse_line(char *text, struct maps_entry *entry)
{
    const char *at = parse_hex(text, &entry->start);
    if (at == NULL || *at != '-' || (at = parse_hex(at + 1, &entry->end)) == NULL || *at != ' ')
        return -1;
    entry->readable = at[1] == 'r';
    entry->writable = at[1] != '\0' && at[2] == 'w';
    entry->executable = at[1] != '\0' && at[2] != '\0' && at[3] == 'x';
    entry->shared = at[1] != '\0' && at[2] != '\0' && at[3] != '\0' && at[4] == 's';
    at = skip_field(at);
    while (*at == ' ')
        at++;
    if ((at = parse_hex(at, &entry->offset)) == NULL)
        return -1;
    at = skip_field(skip_field(at));
    while (*at == ' ')
        at++;
    entry->path = at;
    char *deleted = strstr(text, " (deleted)");
    if (deleted != NULL && deleted[10] == '\0')
        *deleted = '\0';
    return 0;
}

int maps_for_each(int (*visit)(const struct maps_entry *entry, void *context), void *context)
{
    int saved_errno = errno;
    /* Small: this runs on alternate signal stacks; longer lines are skipped. */
    char chunk[512], line[512];
    size_t line_length = 0;
    int overlong = 0, result = 0;
    ssize_t got;

    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errno = saved_errno;
        return -ENOENT;
    }
    while (result == 0 && (got = read(fd, chunk, sizeof chunk)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (ssize_t i = 0; i < got && result == 0; i++) {
            if (chunk[i] != '\n') {
                if (line_length < sizeof line - 1)
                    line[line_length++] = chunk[i];
                else
                    overlong = 1; /* a path longer than the buffer: skip the line */
                continue;
            }
            line[line_length] = '\0';
            struct maps_entry entry;
            if (!overlong && parse_line(line, &entry) == 0)
                result = visit(&entry, context);
            line_length = 0;
            overlong = 0;
        }
    }
    close(fd);
    errno = saved_errno;
    return result;
}

struct find_state {
    uintptr_t address;
    struct maps_entry *out;
};

static int visit_find(const struct maps_entry *entry, void *context)
{
    struct find_state *state = context;
    if (state->address < entry->start || state->address >= entry->end)
        return 0;
    *state->out = *entry;
    state->out->path = "";
    return 1;
}

int maps_find(uintptr_t address, struct maps_entry *out)
{
    struct find_state state = { address, out };
    return maps_for_each(visit_find, &state) == 1 ? 0 : -ENOENT;
}
