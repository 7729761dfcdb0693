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

#include "base/options.h"

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
          "                        existing file, never through a symlink); a relative\n"
          "                        FILE is made absolute from the current directory;\n"
          "                        the path may not contain ':'; \"stderr\" (the default)\n"
          "                        is stderr\n"
          "  -j, --json            the report as one JSON object\n"
          "  -r, --registers       include the registers\n"
          "  -s, --signals=LIST    signals to catch: names without SIG (upper case) or\n"
          "                        numbers, e.g. SEGV,BUS,ABRT, or \"default\" (SEGV, BUS,\n"
          "                        ILL, FPE, ABRT, TRAP, SYS)\n"
          "  -f, --frames=N        at most N frames (1 to 256, default 64)\n"
          "  -h, --help            show this help and exit\n"
          "  -V, --version         show the version and exit\n"
          "\n"
          "Options in EXECINFO_EX_OPTIONS (name=value:...) apply too; the ones above\n"
          "win over them. All are checked before PROGRAM runs: a bad one, or\n"
          "handler=0, is a usage error. EXECINFO_EX_LIBRARY names the library to\n"
          "preload (default " EXECINFO_EX_LIBRARY_PATH ").\n"
          "Exit status: PROGRAM's; 127 if it cannot be run; 2 for a usage error.\n",
          out);
}

static void fail(const char *message)
{
    fprintf(stderr, "execinfo_ex_run: %s\n", message);
    exit(2);
}

/* ':' separates options, and the syntax has no escape for it. */
static void append(char *options, size_t capacity, const char *name, const char *value)
{
    size_t used = strlen(options);
    int written;

    if (strchr(value, ':') != NULL) {
        fprintf(stderr, "execinfo_ex_run: %s '%s' contains ':', which EXECINFO_EX_OPTIONS "
                "cannot express\n", name, value);
        exit(2);
    }
    written = snprintf(options + used, capacity - used, ":%s=%s", name, value);
    if (written < 0 || (size_t)written >= capacity - used)
        fail("options too long");
}

/* The library opens the report only at the crash, after PROGRAM may have
 * changed directory: it takes absolute paths only. */
static void append_report(char *options, size_t capacity, const char *file)
{
    char cwd[4096], path[8192];

    if (file[0] == '/' || file[0] == '\0' || strcmp(file, "stderr") == 0) {
        append(options, capacity, "report", file);
        return;
    }
    if (getcwd(cwd, sizeof cwd) == NULL) {
        fprintf(stderr, "execinfo_ex_run: cannot make %s absolute: %s\n", file, strerror(errno));
        exit(2);
    }
    snprintf(path, sizeof path, "%s/%s", cwd, file);
    append(options, capacity, "report", path);
}

/* handler=1 first: the library stops at the first bad option, and everything
 * before it is kept. Then the user's EXECINFO_EX_OPTIONS, then our flags, so
 * that the flags win (the last one given wins). */
static int build_options(int argc, char **argv, char *options, size_t capacity)
{
    static const struct option long_options[] = {
        { "report", required_argument, NULL, 'o' }, { "json", no_argument, NULL, 'j' },
        { "registers", no_argument, NULL, 'r' },   { "signals", required_argument, NULL, 's' },
        { "frames", required_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },     { NULL, 0, NULL, 0 },
    };
    const char *inherited = getenv("EXECINFO_EX_OPTIONS");
    int c;

    if (snprintf(options, capacity, "handler=1%s%s", inherited && inherited[0] ? ":" : "",
                 inherited ? inherited : "") >= (int)capacity)
        fail("options too long");
    while ((c = getopt_long(argc, argv, "+o:jrs:f:hV", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': append_report(options, capacity, optarg); break;
        case 'j': append(options, capacity, "format", "json"); break;
        case 'r': append(options, capacity, "registers", "1"); break;
        case 's': append(options, capacity, "signals", optarg); break;
        case 'f': append(options, capacity, "frames", optarg); break;
        case 'h': usage(stdout); exit(0);
        case 'V': puts("execinfo_ex_run 0.1.0"); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    return optind;
}

/* With the library's own parser: what it would refuse at load (one line on
 * stderr, then PROGRAM running without the handler or the asked-for
 * settings) is refused here, before PROGRAM runs. */
static void check_options(const char *text)
{
    struct options parsed;
    char error[320];

    options_defaults(&parsed);
    if (options_parse(&parsed, text, error, sizeof error) < 0)
        fail(error);
    if (parsed.handler == 0)
        fail("EXECINFO_EX_OPTIONS has handler=0, which turns off the handler this tool is for");
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
    check_options(options);
    setenv("EXECINFO_EX_OPTIONS", options, 1);
    set_preload();
    execvp(argv[first], argv + first);
    fprintf(stderr, "execinfo_ex_run: cannot run %s: %s\n", argv[first], strerror(errno));
    return 127;
}
