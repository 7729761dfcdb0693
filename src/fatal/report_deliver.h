/* report_deliver.h: one report (a crash's, or a dump's), from collected
 * facts to its destination, with every other thread gathered and held
 * still while it is written. */
#ifndef EXECINFO_EX_REPORT_DELIVER_H
#define EXECINFO_EX_REPORT_DELIVER_H

#include <stddef.h>

#include "crash_facts.h"
#include "second_stage.h"
#include "../base/options.h"
#include "../threads/thread_facts.h"

struct report_request {
    const struct options *options;
    int fd;                 /* the destination; -1: report= (or stderr) */
    int json;               /* JSON rather than text */
    /* Called after the report's own part, with the fd in use (the crash
     * callbacks), if not NULL. */
    void (*middle)(int fd, void *context);
    void *context;
    /* Called first, with the fd in use and the same CONTEXT (the crash
     * lead), if not NULL; returns 1 to leave the trace out. */
    int (*lead)(int fd, void *context);
    /* Leave the other threads stopped after the report: a crash whose
     * process dies next, so that no thread runs on meanwhile (a thread
     * woken in pause() would return into the program, which could exit
     * before the signal kills it). report_deliver_release lets them go. */
    int keep_stopped;
    /* The caller's storage: a crash and a dump may be written at once. */
    struct thread_set *threads;
    char *buffer;
    size_t buffer_size;
    /* The second stage's storage (second_stage.h); NULL: no second stage. */
    struct second_stage *stage;
    int stopped;            /* set by report_deliver: threads are held */
};

/* Gather the other threads (threads= above 1), write the report, and let
 * the threads go on unless keep_stopped. Returns how many threads the
 * report holds, or a negative errno if nothing could be written.
 * Signal-safe. */
int report_deliver(const struct crash_facts *facts, struct report_request *request);

/* Let the threads held by a keep_stopped report go on. Signal-safe. */
void report_deliver_release(struct report_request *request);

#endif
