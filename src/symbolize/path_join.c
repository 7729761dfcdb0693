/* path_join.c: the index's paths from the environment's values
 * (path_join.h).
 * World: signal-safe (pure). */
#include "path_join.h"

#include <errno.h>
#include <string.h>

/* TEXT appended at *USED in OUT (SIZE, NUL-terminated); -1 if it does
 * not fit. */
static int append(char *out, size_t size, size_t *used, const char *text)
{
    size_t length = strlen(text);
    if (length >= size - *used)
        return -1;
    memcpy(out + *used, text, length + 1);
    *used += length;
    return 0;
}

int debug_roots_join(const char *added, const char *system, char *out, size_t size)
{
    size_t used = 0;
    if (system == NULL)
        system = "/usr/lib/debug";
    out[0] = '\0';
    if (append(out, size, &used, added != NULL ? added : "") < 0 ||
        append(out, size, &used, added != NULL && added[0] && system[0] ? ":" : "") < 0 ||
        append(out, size, &used, system) < 0) {
        used = 0;
        append(out, size, &used, "/usr/lib/debug");
        return -ENAMETOOLONG;
    }
    return 0;
}

static void decimal(unsigned value, char *out)
{
    char digits[16];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (int i = 0; i < count; i++)
        out[i] = digits[count - 1 - i];
    out[count] = '\0';
}

int cache_directory_join(const char *option_path, const char *xdg, const char *home, unsigned euid,
                         char *path, size_t size, char *parent)
{
    size_t used = 0, parent_used = 0;
    int failed;
    path[0] = parent[0] = '\0';
    if (option_path != NULL && option_path[0] != '\0') {
        failed = append(path, size, &used, option_path);
    } else if (xdg != NULL && xdg[0] == '/') {
        failed = append(parent, size, &parent_used, xdg) |
                 append(path, size, &used, xdg) | append(path, size, &used, "/execinfo_ex");
    } else if (home != NULL && home[0] == '/') {
        failed = append(parent, size, &parent_used, home) |
                 append(parent, size, &parent_used, "/.cache") |
                 append(path, size, &used, home) | append(path, size, &used, "/.cache/execinfo_ex");
    } else {
        char number[16];
        decimal(euid, number);
        failed = append(path, size, &used, "/tmp/execinfo_ex-") | append(path, size, &used, number);
    }
    return failed ? -1 : 0;
}
