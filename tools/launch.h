/* launch.h: what execinfo_ex_run and execinfo_ex_heap share. Each composes
 * an EXECINFO_EX_OPTIONS string from its flags, checks it with the
 * library's own parser, says up front when the report file cannot be
 * written, preloads its library and becomes the program (execvp), so that
 * the exit status, a death by signal and its core are the program's own.
 * World: normal (an ordinary program). Every failure here is a message on
 * stderr and an exit: 2 for a usage error, 127 when nothing can run. */
#ifndef EXECINFO_EX_TOOLS_LAUNCH_H
#define EXECINFO_EX_TOOLS_LAUNCH_H

#include <stddef.h>

#include "base/options.h"

struct launch {
    const char *tool;     /* the program's name, the prefix of its messages */
    char options[4096];   /* EXECINFO_EX_OPTIONS being composed */
};

/* FIRST (may be NULL), then the inherited EXECINFO_EX_OPTIONS: the flags
 * appended after them win, since the last occurrence of an option wins. */
void launch_init(struct launch *launch, const char *tool, const char *first);

/* ":NAME=VALUE"; a VALUE with ':' is a usage error (no escape exists). */
void launch_append(struct launch *launch, const char *name, const char *value);

/* "NAME=VALUE" as given to --option: any library option, checked by
 * launch_check with the rest; without '=' or a NAME, a usage error. */
void launch_append_assignment(struct launch *launch, const char *assignment);

/* report=FILE, made absolute from the current directory: the library opens
 * it only at the crash, after the program may have changed directory. */
void launch_append_report(struct launch *launch, const char *file);
/* NAME=FILE with FILE made absolute against the current directory. */
void launch_append_path(struct launch *launch, const char *name, const char *file);

/* Parse the composed string as the library will (exit 2 on an error) into
 * PARSED, then say once on stderr why the report would go to stderr
 * instead of its file (it exists, it cannot be replaced, its directory
 * cannot take it), before the program runs. */
void launch_check(struct launch *launch, struct options *parsed);

/* Set EXECINFO_EX_OPTIONS, put LIBRARY first in LD_PRELOAD (ENVIRONMENT_NAME,
 * when set and not empty, names another library), then EXTRA unless it is
 * NULL, and execvp ARGV. */
_Noreturn void launch_exec(struct launch *launch, const char *environment_name,
                           const char *library, const char *extra, char **argv);

_Noreturn void launch_fail(const struct launch *launch, const char *message);

#endif
