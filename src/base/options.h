/* options.h: EXECINFO_EX_OPTIONS, "name=value:name=value" as in ASAN_OPTIONS. */
#ifndef EXECINFO_EX_OPTIONS_H
#define EXECINFO_EX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

/* none; the program only; the program and every module whose own file
 * holds a line table (what a user built with -g: no separate debug
 * file is looked for); every module, separate debug files too. */
enum lines_scope { LINES_NONE, LINES_MAIN, LINES_OWN, LINES_ALL };
enum report_format { REPORT_TEXT, REPORT_JSON };
enum heap_error_action { HEAP_ERROR_ABORT, HEAP_ERROR_REPORT };
enum profile_format { PROFILE_FORMAT_PPROF, PROFILE_FORMAT_FOLDED };

#define OPTIONS_PATH_MAX 256

struct options {
    /* symbol index */
    enum lines_scope lines;   /* lines=none|main|all; default main */
    size_t line_memory;       /* line_memory=SIZE (K, M, G); default 64M */
    int inlines;              /* inlines=0|1: inlined calls with the lines; default 1 */
    int index_cache;          /* index_cache=0|1|PATH: keep built index data on disk; default 1 */
    char index_cache_path[OPTIONS_PATH_MAX]; /* its directory; "": the default one */
    int demangle;             /* demangle=0|1: store demangled names in the index; default 1 */
    int index_at_load;        /* index_at_load=auto|0|1: read modules without a warm cache
                                 file at load (1), or leave them to the crash handler and
                                 the first naming call (0); auto (-1, default): 0 where
                                 the library is only preloaded (src/symbolize/index_light.c) */
    /* the second stage (issue 26): a symbolizer the crash handler starts
       for the frames the index cannot name or line (src/fatal/second_stage.c) */
    int second_stage;         /* second_stage=0|1|all: 0 never, 1 (default) for the frames
                                 of modules the index did not read, all for every frame */
    char symbolizer[OPTIONS_PATH_MAX]; /* symbolizer=PATH: the program; "" (default): found
                                          at install (execinfo_ex_symbolize beside the
                                          library's bin/, else in BINDIR) */
    int second_stage_ms;      /* second_stage_ms=1..60000: its deadline; 0 (default): 2000,
                                 20000 under qemu-user (second_stage.c) */
    /* fatal-signal handler */
    int handler;              /* handler=0|1: install it at load; -1 unset: the core
                                 library does not, the hooks library does */
    uint64_t signals;         /* signals=SEGV,BUS,...: bit n for signal n */
    char report[OPTIONS_PATH_MAX]; /* report=stderr|PATH; "" is stderr */
    int overwrite;            /* overwrite=0|1: may replace an existing report file */
    enum report_format format;/* format=text|json */
    int frames;               /* frames=1..256; default 64 */
    int registers;            /* registers=0|1 */
    int modules;              /* modules=0|1; default 1 */
    int threads;              /* threads=1..16384: threads walked, the reporting one
                                 included; default 1024 */
    int threads_timeout_ms;   /* threads_timeout_ms=1..60000: the gathering's deadline; 1000 */
    int dump_signal;          /* dump_signal=SIG: a dump of every thread, and run on; 0: none */
    char minidump[OPTIONS_PATH_MAX]; /* minidump=PATH: a file (%p: the pid) or a directory;
                                        "": none */
    /* heap hook layer (libexecinfo_ex_hooks.so; the core library ignores these) */
    int heap;                 /* heap=0|1: record allocations; 0 is a pure pass-through */
    int heap_frames;          /* heap_frames=1..64: stack depth per allocation; default 16 */
    int free_frames;          /* free_frames=0..64: stack depth per free (0: its call site); 8 */
    size_t guard;             /* guard=BYTES (0..4096) on each side of a block; default 16 */
    size_t quarantine;        /* quarantine=SIZE: freed bytes held back; default 4M */
    int alloc_fill;           /* alloc_fill=off|0..255: fill new blocks; default off (-1) */
    int free_fill;            /* free_fill=off|0..255: fill freed blocks; default 0xef */
    size_t fill_max;          /* fill_max=SIZE: bytes filled (and checked) per block; 4K */
    int mtrace_frames;        /* mtrace_frames=0..64: a "# stack" line per traced event; 0 */
    enum heap_error_action on_error; /* on_error=abort|report; default abort */
    int exit_check;           /* exit_check=0|1: guards and quarantine checked at exit; 1 */
    char profile[OPTIONS_PATH_MAX]; /* profile=PATH: a heap profile at exit (%p: the pid);
                                       "": none */
    enum profile_format profile_format; /* profile_format=pprof|folded; default pprof */
    int profile_sample;       /* profile_sample=alloc_objects|alloc_space|inuse_objects|
                                 inuse_space|peak_objects|peak_space: the folded value, in
                                 that order (src/hooks/profile_facts.h); default inuse_space */
    int leak_check;           /* leak_check=0|1: a leak check by reachability at exit; 0 */
    int leak_exitcode;        /* leak_exitcode=0..255: the exit status when leaks were
                                 found; -1 (default): the program's own */
    char suppressions[OPTIONS_PATH_MAX]; /* suppressions=PATH: LSan's leak:PATTERN lines; "" */
    int error_exitcode;       /* error_exitcode=0..255: the exit status after a heap
                                 error reported (on_error=report) or leaks found;
                                 -1 (default): the program's own */
    /* guard pages (issue 25): blocks in a reserved pool, a PROT_NONE page
       beside each (src/hooks/guard_pool.c) */
    int guard_pages;          /* guard_pages=0|1|after|before: 0 none, 1 (after) a page
                                 after each block, 2 (before) before it; default 0 */
    size_t guard_pages_max;   /* guard_pages_max=SIZE: only blocks up to SIZE; 128M */
    size_t guard_pages_budget;/* guard_pages_budget=N: protected ranges (live guarded
                                 blocks and quarantined slots); 0 (default):
                                 vm.max_map_count / 8, read at initialisation */
    size_t sample;            /* sample=N: one allocation in N (at random) guarded, with
                                 its stacks; the others go to glibc as with heap=0
                                 (recording is off); 0 (default): off */
    uint64_t sample_seed;     /* sample_seed=S: the choice repeatable; 0: a random seed */
    size_t sample_slots;      /* sample_slots=N: guarded slots of sample=N, live or
                                 waiting after their free (GWP-ASan's pool); 16 */
};

/* The signals the handler takes by default: SEGV BUS ILL FPE ABRT TRAP SYS. */
uint64_t options_default_signals(void);

void options_defaults(struct options *options);

/* Parse TEXT (NULL or "" leaves OPTIONS as it is). On an unknown name or a
 * malformed value, writes one line that says which into ERROR (capacity
 * ERROR_SIZE) and returns -EINVAL; options parsed before it are kept.
 * Normal world. */
int options_parse(struct options *options, const char *text, char *error, size_t error_size);

/* A signal by name, with or without SIG (SIGQUIT, QUIT, RTMIN+2), or by
 * number: 1 to 63 (RTMAX, 64 with glibc, does not fit the signal sets).
 * Returns it, or -EINVAL. Normal world. */
int options_parse_signal(const char *text, size_t length);

/* Parse a size with an optional K, M or G suffix. Returns 0 or -EINVAL. */
int options_parse_size(const char *text, size_t length, size_t *out);

#endif
