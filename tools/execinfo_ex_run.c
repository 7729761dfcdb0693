/* execinfo_ex_run: run a program with the fatal-signal handler preloaded,
 * the job glibc's catchsegv did until 2.35 removed it.
 * World: normal (an ordinary program).
 *
 * It sets LD_PRELOAD and EXECINFO_EX_OPTIONS and then becomes the program
 * (execvp, tools/launch.c): the exit status, a death by signal and its core
 * dump are the program's own, with no wrapper process in between. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch.h"

#ifndef EXECINFO_EX_LIBRARY_PATH
#define EXECINFO_EX_LIBRARY_PATH "/usr/local/lib/libexecinfo_ex.so.0"
#endif

static void usage(FILE *out)
{
    fputs("Usage: execinfo_ex_run [OPTION]... [--] PROGRAM [ARGUMENT]...\n"
          "Run PROGRAM with execinfo_ex's fatal-signal handler: on a crash it writes a\n"
          "report (signal, fault address, the trace with file:line, every other\n"
          "thread's trace, modules with build-ids), then PROGRAM dies as it would have\n"
          "(same status, same core).\n"
          "\n"
          "  -o, --report=FILE     write the report to FILE (created 0600, not over an\n"
          "                        existing file, never through a symlink); a relative\n"
          "                        FILE is made absolute from the current directory;\n"
          "                        the path may not contain ':'; \"stderr\" (the default)\n"
          "                        is stderr. When FILE cannot take the report (it\n"
          "                        exists, say) the report goes to stderr, and this\n"
          "                        is said on stderr before PROGRAM starts; %p in FILE\n"
          "                        is the process id (each child its own file); later\n"
          "                        reports of the same process are appended to it\n"
          "      --overwrite       replace FILE if it exists (a regular file of yours\n"
          "                        with one link; anything else is never replaced)\n"
          "  -j, --json            the report as one JSON object\n"
          "  -r, --registers       include the registers\n"
          "  -s, --signals=LIST    signals to catch: names with or without SIG (upper\n"
          "                        case) or numbers, e.g. SEGV,SIGBUS,6, or \"default\"\n"
          "                        (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS)\n"
          "  -f, --frames=N        at most N frames a thread (1 to 256, default 64)\n"
          "  -t, --threads=N       walk at most N threads, the crashing one included\n"
          "                        (1 to 16384, default 1024; 1: the crashing thread only)\n"
          "      --threads-timeout-ms=N\n"
          "                        give the other threads N ms in all to answer (1 to\n"
          "                        60000, default 1000)\n"
          "  -d, --dump-signal=SIG on signal SIG (a name, e.g. QUIT or SIGQUIT, or a\n"
          "                        number) write a report of every thread, and PROGRAM\n"
          "                        runs on: kill -QUIT PID shows where a hung program is\n"
          "      --minidump=PATH   also write a Breakpad minidump of the crash: PATH is\n"
          "                        a file (%p: the process id) or a directory, where\n"
          "                        each crash gets PROGRAM-PID-YYYYMMDDTHHMMSSZ.dmp\n"
          "  -O, --option=NAME=VALUE\n"
          "                        any option of EXECINFO_EX_OPTIONS (man 3\n"
          "                        backtrace_install_fatal_handler, print_trace), e.g.\n"
          "                        --option lines=all; repeatable, in order with the rest\n"
          "  -h, --help            show this help and exit\n"
          "  -V, --version         show the version and exit\n"
          "\n"
          "Options in EXECINFO_EX_OPTIONS (name=value:...) apply too; the ones above\n"
          "win over them. All are checked before PROGRAM runs: a bad one, or\n"
          "handler=0, is a usage error. EXECINFO_EX_LIBRARY names the library to\n"
          "preload (default " EXECINFO_EX_LIBRARY_PATH "; a relative default is\n"
          "relative to this program's directory: the build tree's tools run the\n"
          "build's libraries).\n"
          "Exit status: PROGRAM's; 127 if it cannot be run; 2 for a usage error.\n",
          out);
}

/* handler=1 first: the library stops at the first bad option, and everything
 * before it is kept. Then the user's EXECINFO_EX_OPTIONS, then our flags, so
 * that the flags win (the last one given wins). */
static int build_options(int argc, char **argv, struct launch *launch)
{
    enum { OVERWRITE = 256, THREADS_TIMEOUT, MINIDUMP };
    static const struct option long_options[] = {
        { "report", required_argument, NULL, 'o' }, { "json", no_argument, NULL, 'j' },
        { "registers", no_argument, NULL, 'r' },   { "signals", required_argument, NULL, 's' },
        { "frames", required_argument, NULL, 'f' }, { "overwrite", no_argument, NULL, OVERWRITE },
        { "threads", required_argument, NULL, 't' },
        { "threads-timeout-ms", required_argument, NULL, THREADS_TIMEOUT },
        { "dump-signal", required_argument, NULL, 'd' },
        { "minidump", required_argument, NULL, MINIDUMP },
        { "option", required_argument, NULL, 'O' },
        { "help", no_argument, NULL, 'h' },        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    launch_init(launch, "execinfo_ex_run", "handler=1");
    while ((c = getopt_long(argc, argv, "+o:jrs:f:t:d:O:hV", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': launch_append_report(launch, optarg); break;
        case OVERWRITE: launch_append(launch, "overwrite", "1"); break;
        case 'j': launch_append(launch, "format", "json"); break;
        case 'r': launch_append(launch, "registers", "1"); break;
        case 's': launch_append(launch, "signals", optarg); break;
        case 'f': launch_append(launch, "frames", optarg); break;
        case 't': launch_append(launch, "threads", optarg); break;
        case THREADS_TIMEOUT: launch_append(launch, "threads_timeout_ms", optarg); break;
        case 'd': launch_append(launch, "dump_signal", optarg); break;
        case MINIDUMP: launch_append_path(launch, "minidump", optarg); break;
        case 'O': launch_append_assignment(launch, optarg); break;
        case 'h': usage(stdout); exit(0);
        case 'V': puts("execinfo_ex_run 0.1.0"); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    return optind;
}

int main(int argc, char **argv)
{
    struct launch launch;
    struct options parsed;
    int first = build_options(argc, argv, &launch);

    if (first >= argc) {
        fputs("execinfo_ex_run: no program given\n", stderr);
        usage(stderr);
        return 2;
    }
    /* What the library would refuse at load (one line on stderr, then
     * PROGRAM running without the handler or the asked-for settings) is
     * refused here, before PROGRAM runs. */
    launch_check(&launch, &parsed);
    if (parsed.handler == 0)
        launch_fail(&launch, "EXECINFO_EX_OPTIONS has handler=0, which turns off the handler this tool is for");
    launch_exec(&launch, "EXECINFO_EX_LIBRARY", EXECINFO_EX_LIBRARY_PATH, NULL, argv + first);
}
