/* execinfo_ex_run: run a program with the fatal-signal handler preloaded,
 * the job glibc's catchsegv did until 2.35 removed it.
 * World: normal (an ordinary program).
 *
 * It sets LD_PRELOAD and EXECINFO_EX_OPTIONS and then becomes the program
 * (execvp): the exit status, a death by signal and its core dump are the
 * program's own, with no wrapper process in between. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef EXECINFO_EX_LIBRARY_PATH
#define EXECINFO_EX_LIBRARY_PATH "/usr/local/lib/libexecinfo_ex.so.0"
#endif

static void usage(FILE *out)
{
    fputs("Usage: execinfo_ex_run [OPTION]... [--] PROGRAM [ARGUMENT]...\n"
          "Run PROGRAM with execinfo_ex's fatal-signal handler: on a crash it writes a\n"
          "report (signal, fault address, the trace with file:line, modules with\n"
          "build-ids), then PROGRAM dies as it would have (same status, same core).\n"
          "\n"
          "  -o, --report=FILE     write the report to FILE (created 0600, not over an\n"
          "                        existing file, never through a symlink); default stderr\n"
          "  -j, --json            the report as one JSON object\n"
          "  -r, --registers       include the registers\n"
          "  -s, --signals=LIST    signals to catch, e.g. SEGV,BUS,ABRT (default: SEGV, BUS,\n"
          "                        ILL, FPE, ABRT, TRAP, SYS)\n"
          "  -f, --frames=N        at most N frames (1 to 256, default 64)\n"
          "  -h, --help            show this help and exit\n"
          "  -V, --version         show the version and exit\n"
          "\n"
          "Options in EXECINFO_EX_OPTIONS apply too. EXECINFO_EX_LIBRARY names the\n"
          "library to preload (default " EXECINFO_EX_LIBRARY_PATH ").\n"
          "Exit status: PROGRAM's; 127 if it cannot be run; 2 for a usage error.\n",
          out);
}

static int append(char *options, size_t capacity, const char *name, const char *value)
{
    size_t used = strlen(options);
    int written = snprintf(options + used, capacity - used, ":%s=%s", name, value);
    return written < 0 || (size_t)written >= capacity - used ? -1 : 0;
}

/* Our options after the user's EXECINFO_EX_OPTIONS, so that ours win. */
static int build_options(int argc, char **argv, char *options, size_t capacity)
{
    static const struct option long_options[] = {
        { "report", required_argument, NULL, 'o' }, { "json", no_argument, NULL, 'j' },
        { "registers", no_argument, NULL, 'r' },   { "signals", required_argument, NULL, 's' },
        { "frames", required_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },     { NULL, 0, NULL, 0 },
    };
    const char *inherited = getenv("EXECINFO_EX_OPTIONS");
    int failed = snprintf(options, capacity, "%s", inherited ? inherited : "") >= (int)capacity;
    int c;

    failed |= append(options, capacity, "handler", "1");
    while ((c = getopt_long(argc, argv, "+o:jrs:f:hV", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': failed |= append(options, capacity, "report", optarg); break;
        case 'j': failed |= append(options, capacity, "format", "json"); break;
        case 'r': failed |= append(options, capacity, "registers", "1"); break;
        case 's': failed |= append(options, capacity, "signals", optarg); break;
        case 'f': failed |= append(options, capacity, "frames", optarg); break;
        case 'h': usage(stdout); exit(0);
        case 'V': puts("execinfo_ex_run 0.1.0"); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (failed) {
        fputs("execinfo_ex_run: options too long\n", stderr);
        exit(2);
    }
    return optind;
}

static void set_preload(void)
{
    const char *library = getenv("EXECINFO_EX_LIBRARY");
    const char *existing = getenv("LD_PRELOAD");
    char *value;

    if (library == NULL || library[0] == '\0')
        library = EXECINFO_EX_LIBRARY_PATH;
    if (access(library, R_OK) != 0) {
        fprintf(stderr, "execinfo_ex_run: cannot read %s: %s\n", library, strerror(errno));
        exit(127);
    }
    if (asprintf(&value, "%s%s%s", library, existing && existing[0] ? ":" : "",
                 existing ? existing : "") < 0 || setenv("LD_PRELOAD", value, 1) != 0) {
        fputs("execinfo_ex_run: out of memory\n", stderr);
        exit(127);
    }
    free(value);
}

int main(int argc, char **argv)
{
    char options[4096];
    int first = build_options(argc, argv, options, sizeof options);

    if (first >= argc) {
        fputs("execinfo_ex_run: no program given\n", stderr);
        usage(stderr);
        return 2;
    }
    /* A leading ':' from an empty inherited value is harmless to the parser. */
    setenv("EXECINFO_EX_OPTIONS", options, 1);
    set_preload();
    execvp(argv[first], argv + first);
    fprintf(stderr, "execinfo_ex_run: cannot run %s: %s\n", argv[first], strerror(errno));
    return 127;
}
