/* launch.c: compose, check and preload for the tools (launch.h).
 * World: normal (an ordinary program). */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Noreturn void launch_fail(const struct launch *launch, const char *message)
{
    fprintf(stderr, "%s: %s\n", launch->tool, message);
    exit(2);
}

void launch_init(struct launch *launch, const char *tool, const char *first)
{
    const char *inherited = getenv("EXECINFO_EX_OPTIONS");
    int written;

    launch->tool = tool;
    if (first == NULL)
        first = "";
    if (inherited == NULL)
        inherited = "";
    written = snprintf(launch->options, sizeof launch->options, "%s%s%s", first,
                       first[0] && inherited[0] ? ":" : "", inherited);
    if (written < 0 || (size_t)written >= sizeof launch->options)
        launch_fail(launch, "options too long");
}

void launch_append(struct launch *launch, const char *name, const char *value)
{
    size_t used = strlen(launch->options), capacity = sizeof launch->options;
    int written;

    if (strchr(value, ':') != NULL) {
        fprintf(stderr, "%s: %s '%s' contains ':', which EXECINFO_EX_OPTIONS cannot express\n",
                launch->tool, name, value);
        exit(2);
    }
    written = snprintf(launch->options + used, capacity - used, "%s%s=%s", used ? ":" : "",
                       name, value);
    if (written < 0 || (size_t)written >= capacity - used)
        launch_fail(launch, "options too long");
}

void launch_append_assignment(struct launch *launch, const char *assignment)
{
    const char *equals = strchr(assignment, '=');
    if (equals == NULL || equals == assignment) {
        fprintf(stderr, "%s: --option wants NAME=VALUE (as in EXECINFO_EX_OPTIONS), not '%s'\n",
                launch->tool, assignment);
        exit(2);
    }
    char name[128];
    size_t length = (size_t)(equals - assignment);
    if (length >= sizeof name) {
        fprintf(stderr, "%s: --option: no option is named '%.*s'\n", launch->tool, (int)length,
                assignment);
        exit(2);
    }
    memcpy(name, assignment, length);
    name[length] = '\0';
    launch_append(launch, name, equals + 1);
}

void launch_append_report(struct launch *launch, const char *file)
{
    if (strcmp(file, "stderr") == 0)
        launch_append(launch, "report", file);
    else
        launch_append_path(launch, "report", file);
}

void launch_append_path(struct launch *launch, const char *name, const char *file)
{
    char cwd[4096], path[8192];

    if (file[0] == '/' || file[0] == '\0') {
        launch_append(launch, name, file);
        return;
    }
    if (getcwd(cwd, sizeof cwd) == NULL) {
        fprintf(stderr, "%s: cannot make %s absolute: %s\n", launch->tool, file, strerror(errno));
        exit(2);
    }
    snprintf(path, sizeof path, "%s/%s", cwd, file);
    launch_append(launch, name, path);
}

/* The library's open (src/fatal/report_destination.c): O_CREAT O_EXCL O_NOFOLLOW, or
 * with overwrite=1 an existing regular file of the effective user with one
 * link. Whatever it would refuse sends the report to stderr, silently: a
 * crashing process cannot explain much, so the reason is given here. */
static void check_report_file(const struct launch *launch, const struct options *parsed)
{
    const char *file = parsed->report;
    struct stat status;

    if (file[0] == '\0')
        return;
    if (lstat(file, &status) == 0) {
        if (!parsed->overwrite)
            fprintf(stderr, "%s: %s exists and a report never replaces a file unasked: "
                    "a report would go to stderr (--overwrite replaces it)\n", launch->tool, file);
        else if (!S_ISREG(status.st_mode) || status.st_uid != geteuid() || status.st_nlink != 1)
            fprintf(stderr, "%s: %s is not a regular file of yours with one link, which is "
                    "never replaced: a report would go to stderr\n", launch->tool, file);
        return;
    }
    char directory[OPTIONS_PATH_MAX];
    snprintf(directory, sizeof directory, "%s", file);
    char *slash = strrchr(directory, '/');
    if (slash == directory)
        slash[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    if (access(directory, W_OK | X_OK) != 0)
        fprintf(stderr, "%s: cannot create %s (%s: %s): a report would go to stderr\n",
                launch->tool, file, directory, strerror(errno));
}

void launch_check(struct launch *launch, struct options *parsed)
{
    char error[1024];

    options_defaults(parsed);
    if (options_parse(parsed, launch->options, error, sizeof error) < 0)
        launch_fail(launch, error);
    check_report_file(launch, parsed);
}

static void check_readable(const struct launch *launch, const char *library)
{
    if (access(library, R_OK) != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", launch->tool, library, strerror(errno));
        exit(127);
    }
}

/* A compiled-in PATH that is relative is relative to the directory of
 * this executable (/proc/self/exe): the build tree's tools are compiled
 * so, to find the libraries beside them before any install; an installed
 * tool has absolute paths. The result is allocated (or PATH itself). */
static const char *beside_executable(const struct launch *launch, const char *path)
{
    char self[4096], *joined;
    if (path == NULL || path[0] == '/')
        return path;
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) {
        fprintf(stderr, "%s: cannot find its own file to find %s: %s\n", launch->tool, path,
                length < 0 ? strerror(errno) : "empty");
        exit(127);
    }
    self[length] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    if (asprintf(&joined, "%s/%s", self, path) < 0) {
        fprintf(stderr, "%s: out of memory\n", launch->tool);
        exit(127);
    }
    return joined;
}

static void set_preload(const struct launch *launch, const char *environment_name,
                        const char *library, const char *extra)
{
    const char *chosen = getenv(environment_name);
    const char *existing = getenv("LD_PRELOAD");
    char *value;

    if (chosen == NULL || chosen[0] == '\0')
        chosen = beside_executable(launch, library);
    extra = beside_executable(launch, extra);
    check_readable(launch, chosen);
    if (extra != NULL)
        check_readable(launch, extra);
    if (asprintf(&value, "%s%s%s%s%s", chosen, extra ? ":" : "", extra ? extra : "",
                 existing && existing[0] ? ":" : "", existing ? existing : "") < 0 ||
        setenv("LD_PRELOAD", value, 1) != 0) {
        fprintf(stderr, "%s: out of memory\n", launch->tool);
        exit(127);
    }
    free(value);
}

_Noreturn void launch_exec(struct launch *launch, const char *environment_name,
                           const char *library, const char *extra, char **argv)
{
    if (setenv("EXECINFO_EX_OPTIONS", launch->options, 1) != 0) {
        fprintf(stderr, "%s: out of memory\n", launch->tool);
        exit(127);
    }
    set_preload(launch, environment_name, library, extra);
    execvp(argv[0], argv);
    fprintf(stderr, "%s: cannot run %s: %s\n", launch->tool, argv[0], strerror(errno));
    exit(127);
}
