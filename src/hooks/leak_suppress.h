/* leak_suppress.h: LeakSanitizer's suppressions for the leak check:
 * "leak:PATTERN" lines (suppressions=FILE) and a small built-in list,
 * each matched against the function, source file and module of every
 * frame of a leak's allocation stack. */
#ifndef EXECINFO_EX_LEAK_SUPPRESS_H
#define EXECINFO_EX_LEAK_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "stack_depot.h"

struct leak_suppression {
    const char *pattern;           /* LSan's template: '*' any run, '^' and '$' anchors */
    const char *why;               /* a built-in one's reason; NULL for the user's */
    uint64_t objects, bytes;       /* what it kept out of this report */
};

struct leak_suppressions {
    struct leak_suppression *items;
    size_t count;
    char *text;                    /* the file's contents, which the patterns point into */
    int error;                     /* reading the file: a positive errno, 0 */
    size_t unknown;                /* lines of a type other than leak: (ignored) */
};

/* The built-in list, then the lines of PATH (NULL or "": none). An
 * unreadable file is noted in ERROR, not fatal. Returns 0 or -ENOMEM.
 * World: normal (malloc, stdio). */
int leak_suppressions_load(struct leak_suppressions *list, const char *path);
void leak_suppressions_free(struct leak_suppressions *list);

/* For each of the COUNT stacks, MATCHES[i] gets the suppression that
 * matches its first frame any suppression matches (LSan's order), or
 * NULL. One resolution of every frame at once (libdw's setup is the
 * cost). Returns 0 or -ENOMEM. World: normal (libdw, malloc). */
int leak_suppressions_match(struct leak_suppressions *list, const stack_id *stacks,
                            size_t count, struct leak_suppression **matches);

/* LSan's TemplateMatch: a substring match where '*' matches any run, a
 * leading '^' anchors at the start and a trailing '$' at the end. An
 * empty or NULL TEXT never matches. Pure. */
int leak_template_match(const char *pattern, const char *text);

#endif
