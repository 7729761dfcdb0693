/* second_stage.h: the crash handler's second stage (issue 26): a
 * symbolizer program, started from the handler, resolves the report's
 * addresses that the index cannot name or line (a module it did not
 * read) with libdw and libiberty in its own fresh process, and answers
 * over a pipe within a deadline. When it cannot run, the report says why
 * in one line and the frames are what the index gives (else
 * path(+offset) with the module's build-id). */
#ifndef EXECINFO_EX_SECOND_STAGE_H
#define EXECINFO_EX_SECOND_STAGE_H

#include <signal.h>
#include <stdint.h>

#include "crash_facts.h"
#include "../base/options.h"
#include "../base/text_out.h"
#include "../symbolize/index.h"
#include "../symbolize/resolved_names.h"
#include "../symbolize/symtab_names.h"
#include "../threads/thread_facts.h"

/* What became of the stage. */
enum second_stage_outcome {
    SECOND_STAGE_NOT_NEEDED,  /* no frame asked for it */
    SECOND_STAGE_OFF,         /* frames wanted it, second_stage=0 */
    SECOND_STAGE_ANSWERED,
    SECOND_STAGE_NO_PROGRAM,  /* no symbolizer found at install, none given */
    SECOND_STAGE_PIPE_FAILED, /* error: the errno */
    SECOND_STAGE_START_FAILED,/* clone refused (seccomp, a process limit, memory): error */
    SECOND_STAGE_EXEC_FAILED, /* execve refused (missing, not executable, memory): error */
    SECOND_STAGE_TIMED_OUT,   /* no whole answer by second_stage_ms: killed */
    SECOND_STAGE_DIED,        /* ended before its answer: wait_status */
    SECOND_STAGE_MALFORMED,   /* an answer that does not parse (the frames before kept) */
};

/* A symbolizer that answered and is left to end after the report (it
 * stores what it read in the index cache then): reaped by
 * second_stage_finish, SIGCHLD blocked until then. pid 0: none. */
struct stage_child {
    long pid;
    int64_t deadline_ns;      /* CLOCK_MONOTONIC: killed if still there */
    sigset_t previous_mask;   /* restored once reaped */
    int child_pending;        /* a SIGCHLD was pending before the start */
};

struct second_stage {
    enum second_stage_outcome outcome;
    int error;                /* an errno */
    int wait_status;          /* wait4's, for SECOND_STAGE_DIED */
    int asked;                /* addresses asked for */
    int timeout_ms;
    const char *program;      /* the options' symbolizer path */
    struct stage_child child; /* answered, not yet reaped */
    struct resolved_names names;
    /* Names of frames in modules the index has not read (a cold cache)
     * that the stage did not name, from their files' .symtab or .dynsym
     * (symtab_names.h); under names. */
    struct resolved_names cold_names;
    struct symtab_scratch scratch;
    /* What was asked (second_stage.c): one set per report, as the rest. */
    struct second_stage_request {
        struct text_out out;
        const struct index_snapshot *snapshot;
        int mode;
        unsigned char module_sent[4096 / 8]; /* by module index; beyond it, sent each time */
        int count;                                 /* addresses asked */
        uintptr_t asked[RESOLVED_FRAMES_MAX];
        size_t asked_module[RESOLVED_FRAMES_MAX];  /* its index in the snapshot */
        int full;
        uintptr_t naming[RESOLVED_FRAMES_MAX];     /* a cold module's, for symtab_names */
        unsigned char done[RESOLVED_FRAMES_MAX];
    } ask;
    size_t request_length;
    char request[60 * 1024];  /* under a pipe's 64 KiB: written whole before the start */
};

/* Set at install where the process runs under an emulator (qemu-user:
 * no vDSO), whose programs start ten times slower or more: the default
 * deadline is ten times as long there. */
extern int second_stage_emulated;

/* Ask the symbolizer of OPTIONS about the frames of FACTS and THREADS
 * (may be NULL) that the index SNAPSHOT cannot name or line (every frame
 * in a module, with second_stage=all); then name those of them in modules
 * the index has not read that it did not name from their files' symbol
 * tables. Fills *STAGE; its names are valid until the next run.
 * Signal-safe (raw clone, execve, pipes, poll; open, pread). */
void second_stage_run(struct second_stage *stage, const struct crash_facts *facts,
                      const struct thread_set *threads, const struct index_snapshot *snapshot,
                      const struct options *options);

/* After the report: the symbolizer that answered is given until the
 * stage's deadline to end (it stores the index cache's files after its
 * answer, so that the next crash is warm), then killed, and reaped.
 * Nothing when none is left. Signal-safe. */
void second_stage_finish(struct second_stage *stage);

/* The names STAGE resolved, over the .symtab names (NULL: none). */
const struct resolved_names *second_stage_names(const struct second_stage *stage);

/* The report's line about the stage, when one was needed: what it
 * resolved, or why it did not ("*** second stage: ...\n"). Signal-safe. */
void second_stage_text(struct text_out *out, const struct second_stage *stage);
/* ,"second_stage":{"outcome":...,"reason":...,"asked":N,"resolved":N}. Signal-safe. */
void second_stage_json(struct text_out *out, const struct second_stage *stage);

#endif
