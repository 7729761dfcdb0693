/* execinfo_ex_heap: run a program with the heap hook layer preloaded, the
 * way valgrind, heaptrack and glibc's memusage run one: the command finds
 * its library, the heap options are flags, PROGRAM's arguments are its own.
 * World: normal (an ordinary program).
 *
 * Like execinfo_ex_run it becomes the program (execvp, tools/launch.c): the
 * exit status is PROGRAM's, and a heap error with --on-error=abort is
 * PROGRAM's death by SIGABRT, after the report. --leaks preloads
 * tools/mtrace_at_load.c too, which starts the trace at load.
 *
 * --profile makes it a profiler rather than a checker: the profile at
 * exit, and no guards, no quarantine, no fill and no exit check, the
 * checker's costs, unless EXECINFO_EX_OPTIONS or a flag asks for them
 * (they come after these defaults, and the last one wins). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"

#ifndef EXECINFO_EX_HOOKS_LIBRARY_PATH
#define EXECINFO_EX_HOOKS_LIBRARY_PATH "/usr/local/lib/libexecinfo_ex_hooks.so.0"
#endif
/* tools/mtrace_at_load.c, for --leaks. */
#ifndef EXECINFO_EX_MTRACE_AT_LOAD_PATH
#define EXECINFO_EX_MTRACE_AT_LOAD_PATH "/usr/local/lib/execinfo_ex/mtrace_at_load.so"
#endif

/* --leaks: the trace starts at load; its stacks, unless --mtrace-frames. */
static int trace_at_load, trace_frames_given;
/* --error-exitcode without --on-error: the program goes on after a heap
 * error, to end with that status, as under valgrind. */
static int error_exitcode_given, on_error_given;

static void usage(FILE *out)
{
    fputs("Usage: execinfo_ex_heap [OPTION]... [--] PROGRAM [ARGUMENT]...\n"
          "Run PROGRAM with execinfo_ex's heap checker (libexecinfo_ex_hooks.so): every\n"
          "allocation records its stack, blocks get guard zones, freed blocks wait in a\n"
          "quarantine. A heap overflow or underflow, a write after free, a double or an\n"
          "invalid free is reported with the block and the stacks that allocated and\n"
          "freed it; then PROGRAM aborts (crash report included) unless --on-error=report.\n"
          "\n"
          "  -f, --frames=N         frames of each allocation's stack (1 to 64, default 16)\n"
          "      --free-frames=N    frames of each free's stack (0 to 64, default 8; 0:\n"
          "                         the freeing call site alone)\n"
          "  -g, --guard=BYTES      guard zone on each side of a block (0 to 4096,\n"
          "                         default 16)\n"
          "  -q, --quarantine=SIZE  freed bytes held back from reuse (K, M, G; default 4M;\n"
          "                         0: none)\n"
          "      --fill=BYTE|off    fill freed blocks with BYTE (0xNN or decimal; default\n"
          "                         0xef); a write after free is found by it\n"
          "      --alloc-fill=BYTE|off  fill new blocks (default off)\n"
          "      --fill-max=SIZE    bytes filled and checked per freed block (default 4K)\n"
          "      --guard-pages[=before]  end each block against an inaccessible page\n"
          "                         (before: start it after one), and make a freed\n"
          "                         block's pages inaccessible in the quarantine: a\n"
          "                         read or write past the end or after free faults at\n"
          "                         the instruction and the crash report says so first\n"
          "      --guard-pages-max=SIZE  guard only blocks up to SIZE (default 128M)\n"
          "      --sample=N         production mode: one allocation in N, at random,\n"
          "                         gets guard pages and its stacks; every other one\n"
          "                         goes to glibc untouched (no guards, fill, leak check)\n"
          "      --sample-seed=S    make --sample's choice repeatable\n"
          "  -e, --on-error=WHAT    after a heap report: abort (default: PROGRAM dies of\n"
          "                         SIGABRT) or report (PROGRAM goes on)\n"
          "  -o, --report=FILE      write the reports to FILE instead of stderr (created\n"
          "                         0600, never over an existing file, never through a\n"
          "                         symlink; said on stderr before PROGRAM starts when\n"
          "                         FILE cannot take them); relative to the current\n"
          "                         directory; may not contain ':'\n"
          "      --overwrite        replace FILE if it exists (a regular file of yours\n"
          "                         with one link)\n"
          "  -j, --json             reports as JSON\n"
          "  -L, --leak-check       check for leaks at exit by reachability, as\n"
          "                         LeakSanitizer does: the blocks that no pointer in\n"
          "                         globals, stacks, registers or TLS reaches, directly\n"
          "                         or through other blocks, grouped by stack\n"
          "      --suppressions=FILE  leaks to leave out: LeakSanitizer's leak:PATTERN\n"
          "                         lines, matched against each frame's function, file\n"
          "                         and module ('*' any run, '^' and '$' anchors)\n"
          "      --leak-exitcode=N  exit with N (0 to 255) when leaks were found\n"
          "      --error-exitcode=N exit with N after a heap error or when leaks were\n"
          "                         found; PROGRAM then goes on after a heap error\n"
          "                         (--on-error=report) unless --on-error says otherwise\n"
          "  -l, --leaks=FILE       trace every allocation and free of PROGRAM, from its\n"
          "                         start to its exit, to FILE (glibc's mtrace format,\n"
          "                         16 frames of stack per event) for execinfo_ex_leaks\n"
          "      --mtrace=FILE      MALLOC_TRACE=FILE only: a PROGRAM that calls mtrace()\n"
          "                         traces from there to its muntrace()\n"
          "      --mtrace-frames=N  frames of stack per traced event (0 to 64; default 0,\n"
          "                         16 with --leaks)\n"
          "  -O, --option=NAME=VALUE any option of EXECINFO_EX_OPTIONS (man 1\n"
          "                         execinfo_ex_heap, man 3 print_trace), e.g. --option\n"
          "                         lines=all; repeatable, in order with the rest\n"
          "  -p, --profile=FILE     profile PROGRAM's heap: at its exit, write what each\n"
          "                         allocation stack allocated in all, still holds, and\n"
          "                         held at the peak, to FILE (%p: the process id) as a\n"
          "                         pprof profile (go tool pprof FILE) or folded stacks;\n"
          "                         a profiler, not a checker: no guards, quarantine or\n"
          "                         fill unless asked for\n"
          "      --profile-format=pprof|folded  FILE's format (default pprof, gzipped)\n"
          "      --profile-sample=TYPE  the folded stacks' value: inuse_space (default),\n"
          "                         inuse_objects, alloc_space, alloc_objects,\n"
          "                         peak_space or peak_objects\n"
          "  -h, --help             show this help and exit\n"
          "  -V, --version          show the version and exit\n"
          "\n"
          "Options in EXECINFO_EX_OPTIONS (name=value:...) apply too; the flags win.\n"
          "All are checked before PROGRAM runs: a bad one, or heap=0, is a usage error.\n"
          "EXECINFO_EX_HOOKS_LIBRARY names the library to preload (default\n"
          EXECINFO_EX_HOOKS_LIBRARY_PATH "; a relative default is relative to this\n"
          "program's directory: the build tree's tools run the build's libraries).\n"
          "Exit status: PROGRAM's (134 for its SIGABRT after a heap error), or the one\n"
          "--leak-exitcode or --error-exitcode set; 127 if it cannot be run; 2 for a\n"
          "usage error.\n",
          out);
}

/* MALLOC_TRACE is opened by PROGRAM's mtrace(), after it may have changed
 * directory: made absolute here. */
static void set_trace(const struct launch *launch, const char *file)
{
    char cwd[4096], path[8192];

    if (file[0] == '\0')
        launch_fail(launch, "--mtrace needs a file name");
    if (file[0] != '/') {
        if (getcwd(cwd, sizeof cwd) == NULL) {
            fprintf(stderr, "execinfo_ex_heap: cannot make %s absolute: %s\n", file,
                    strerror(errno));
            exit(2);
        }
        snprintf(path, sizeof path, "%s/%s", cwd, file);
        file = path;
    }
    if (setenv("MALLOC_TRACE", file, 1) != 0)
        launch_fail(launch, "out of memory");
}

enum { FILL = 256, ALLOC_FILL, FILL_MAX, OVERWRITE, MTRACE, MTRACE_FRAMES, FREE_FRAMES,
       PROFILE_FORMAT, PROFILE_SAMPLE, LEAK_EXITCODE, ERROR_EXITCODE, SUPPRESSIONS,
       GUARD_PAGES, GUARD_PAGES_MAX, SAMPLE, SAMPLE_SEED };
static const char short_options[] = "+f:g:q:e:o:jl:p:O:LhV";

/* The profiler's defaults, before the user's options and flags. */
#define PROFILER_DEFAULTS "guard=0:quarantine=0:free_fill=off:exit_check=0"

/* Whether the flags ask for a profile: a first pass over them. */
static int wants_profile(int argc, char **argv, const struct option *long_options)
{
    int c, profile = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1)
        profile |= c == 'p';
    opterr = 1;
    optind = 0; /* glibc: start again from scratch */
    return profile;
}

/* The user's EXECINFO_EX_OPTIONS first, then the flags: the last one wins. */
static int build_options(int argc, char **argv, struct launch *launch)
{
    static const struct option long_options[] = {
        { "frames", required_argument, NULL, 'f' },   { "guard", required_argument, NULL, 'g' },
        { "free-frames", required_argument, NULL, FREE_FRAMES },
        { "quarantine", required_argument, NULL, 'q' }, { "fill", required_argument, NULL, FILL },
        { "alloc-fill", required_argument, NULL, ALLOC_FILL },
        { "fill-max", required_argument, NULL, FILL_MAX },
        { "on-error", required_argument, NULL, 'e' }, { "report", required_argument, NULL, 'o' },
        { "overwrite", no_argument, NULL, OVERWRITE }, { "json", no_argument, NULL, 'j' },
        { "leaks", required_argument, NULL, 'l' },   { "mtrace", required_argument, NULL, MTRACE },
        { "mtrace-frames", required_argument, NULL, MTRACE_FRAMES },
        { "option", required_argument, NULL, 'O' },
        { "profile", required_argument, NULL, 'p' },
        { "profile-format", required_argument, NULL, PROFILE_FORMAT },
        { "profile-sample", required_argument, NULL, PROFILE_SAMPLE },
        { "leak-check", no_argument, NULL, 'L' },
        { "leak-exitcode", required_argument, NULL, LEAK_EXITCODE },
        { "error-exitcode", required_argument, NULL, ERROR_EXITCODE },
        { "suppressions", required_argument, NULL, SUPPRESSIONS },
        { "guard-pages", optional_argument, NULL, GUARD_PAGES },
        { "guard-pages-max", required_argument, NULL, GUARD_PAGES_MAX },
        { "sample", required_argument, NULL, SAMPLE },
        { "sample-seed", required_argument, NULL, SAMPLE_SEED },
        { "help", no_argument, NULL, 'h' },           { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    launch_init(launch, "execinfo_ex_heap",
                wants_profile(argc, argv, long_options) ? PROFILER_DEFAULTS : NULL);
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        switch (c) {
        case 'f': launch_append(launch, "heap_frames", optarg); break;
        case FREE_FRAMES: launch_append(launch, "free_frames", optarg); break;
        case 'g': launch_append(launch, "guard", optarg); break;
        case 'q': launch_append(launch, "quarantine", optarg); break;
        case FILL: launch_append(launch, "free_fill", optarg); break;
        case ALLOC_FILL: launch_append(launch, "alloc_fill", optarg); break;
        case FILL_MAX: launch_append(launch, "fill_max", optarg); break;
        case 'e': launch_append(launch, "on_error", optarg); on_error_given = 1; break;
        case 'L': launch_append(launch, "leak_check", "1"); break;
        case SUPPRESSIONS: launch_append_path(launch, "suppressions", optarg); break;
        case LEAK_EXITCODE: launch_append(launch, "leak_exitcode", optarg); break;
        case ERROR_EXITCODE:
            launch_append(launch, "error_exitcode", optarg);
            error_exitcode_given = 1;
            break;
        case GUARD_PAGES: launch_append(launch, "guard_pages", optarg ? optarg : "1"); break;
        case GUARD_PAGES_MAX: launch_append(launch, "guard_pages_max", optarg); break;
        case SAMPLE: launch_append(launch, "sample", optarg); break;
        case SAMPLE_SEED: launch_append(launch, "sample_seed", optarg); break;
        case 'o': launch_append_report(launch, optarg); break;
        case OVERWRITE: launch_append(launch, "overwrite", "1"); break;
        case 'j': launch_append(launch, "format", "json"); break;
        case 'l': set_trace(launch, optarg); trace_at_load = 1; break;
        case MTRACE: set_trace(launch, optarg); break;
        case MTRACE_FRAMES:
            launch_append(launch, "mtrace_frames", optarg);
            trace_frames_given = 1;
            break;
        case 'O': launch_append_assignment(launch, optarg); break;
        case 'p': launch_append_path(launch, "profile", optarg); break;
        case PROFILE_FORMAT: launch_append(launch, "profile_format", optarg); break;
        case PROFILE_SAMPLE: launch_append(launch, "profile_sample", optarg); break;
        case 'h': usage(stdout); exit(0);
        case 'V': puts("execinfo_ex_heap 0.1.0"); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (trace_at_load && !trace_frames_given)
        launch_append(launch, "mtrace_frames", "16");
    if (error_exitcode_given && !on_error_given)
        launch_append(launch, "on_error", "report");
    return optind;
}

int main(int argc, char **argv)
{
    struct launch launch;
    struct options parsed;
    int first = build_options(argc, argv, &launch);

    if (first >= argc) {
        fputs("execinfo_ex_heap: no program given\n", stderr);
        usage(stderr);
        return 2;
    }
    launch_check(&launch, &parsed);
    if (parsed.heap == 0)
        launch_fail(&launch, "EXECINFO_EX_OPTIONS has heap=0, which turns off the checks this tool is for");
    launch_exec(&launch, "EXECINFO_EX_HOOKS_LIBRARY", EXECINFO_EX_HOOKS_LIBRARY_PATH,
                trace_at_load ? EXECINFO_EX_MTRACE_AT_LOAD_PATH : NULL, argv + first);
}
