/* execinfo_ex_leaks: read a malloc trace (mtrace: ours, docs/MTRACE.md, or
 * glibc's), or saved malloc_get_state() blobs (docs/STATE_BLOB.md), and
 * report the memory not freed, grouped by allocation stack, with each
 * frame's function and file:line (man 1 execinfo_ex_leaks).
 * World: normal (an ordinary program).
 *
 * main.c holds the options and the order of the steps; each input is
 * opened and read once (input.h); reading a trace is line_reader +
 * trace_replay, the rest works on a heap_snapshot. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap_snapshot.h"
#include "hooks/profile_render.h"
#include "profile_build.h"
#include "input.h"
#include "line_reader.h"
#include "progress.h"
#include "report.h"
#include "sites.h"
#include "state_reader.h"
#include "symbolize.h"
#include "trace_replay.h"

#ifndef EXECINFO_EX_VERSION
#define EXECINFO_EX_VERSION "0.1.0"
#endif

#define EXIT_NO_LEAK 0
#define EXIT_LEAKS 1
#define EXIT_TROUBLE 2

enum output_form { OUTPUT_TEXT, OUTPUT_SUMMARY, OUTPUT_JSON, OUTPUT_PPROF, OUTPUT_FOLDED };

struct options {
    size_t stacks, frames;
    enum output_form form;
    enum profile_value sample;   /* folded: the value of each line */
    const char *output;          /* NULL: standard output */
    int progress;
    const char *input;
    const char *before;   /* a second input: the blob to subtract, or NULL */
};

static void usage(FILE *out)
{
    fputs("Usage: execinfo_ex_leaks [OPTION]... TRACE\n"
          "       execinfo_ex_leaks [OPTION]... STATE [LATER_STATE]\n"
          "Report the memory a program did not free, from the malloc trace TRACE\n"
          "(MALLOC_TRACE with libexecinfo_ex_hooks.so or glibc's mtrace(3); - reads\n"
          "standard input): the blocks still live at the end, grouped by the stack that\n"
          "allocated them, most bytes first, each frame with its function and file:line.\n"
          "A STATE file (a saved malloc_get_state() blob, known by its first bytes)\n"
          "gives the blocks live when it was taken; with LATER_STATE, those live in\n"
          "LATER_STATE and not in STATE.\n"
          "\n"
          "  --stacks=N     show the N stacks with the most bytes (default 20; 0: all)\n"
          "  --frames=N     show at most N frames of each stack (default 16; 0: all)\n"
          "  --format=FORM  text (the default), summary (only the summary line: bytes,\n"
          "                 blocks, stacks, events and malformed lines), json (one JSON\n"
          "                 object, format \"execinfo_ex leaks 1\"), pprof (a heap profile,\n"
          "                 gzipped profile.proto, as the hooks library's profile=) or\n"
          "                 folded (\"outer;...;inner VALUE\" lines for flame graphs)\n"
          "  --summary      the same as --format=summary\n"
          "  --json         the same as --format=json\n"
          "  --sample=TYPE  the value of a folded line: inuse_space (the default),\n"
          "                 inuse_objects, alloc_space or alloc_objects (alloc_*: every\n"
          "                 allocation of the trace, freed or not); also --profile-sample\n"
          "  -o, --output=FILE  write to FILE instead of standard output\n"
          "  --no-progress  no progress line on stderr (there is one only when stderr\n"
          "                 is a terminal and reading takes more than half a second)\n"
          "  -h, --help     show this help and exit\n"
          "  -V, --version  show the version and exit\n"
          "\n"
          "Malformed lines, frees of pointers never allocated and duplicate allocations\n"
          "are reported on stderr (the first few of each, then a count).\n"
          "An input is a regular file, a pipe or standard input (a device is refused),\n"
          "read once.\n"
          "Exit status: 0 if no memory is left, 1 if some is, 2 for a usage error, an\n"
          "input that cannot be read, or one that is neither a trace nor a state blob.\n",
          out);
}

static void fail_usage(const char *message, const char *detail)
{
    fprintf(stderr, "execinfo_ex_leaks: %s%s\n", message, detail ? detail : "");
    fputs("Try 'execinfo_ex_leaks --help' for more information.\n", stderr);
    exit(EXIT_TROUBLE);
}

/* A decimal count, digits only, below a billion. */
static size_t parse_count(const char *option, const char *text)
{
    size_t value = 0, digits = strspn(text, "0123456789");

    if (digits == 0 || text[digits] != '\0' || digits > 9) {
        fprintf(stderr, "execinfo_ex_leaks: bad value '%s' for %s: a number from 0 (all) to "
                "999999999\n", text, option);
        exit(EXIT_TROUBLE);
    }
    for (size_t i = 0; i < digits; i++)
        value = value * 10 + (size_t)(text[i] - '0');
    return value;
}

enum {
    OPTION_STACKS = 256, OPTION_FRAMES, OPTION_SUMMARY, OPTION_JSON, OPTION_NO_PROGRESS,
    OPTION_FORMAT, OPTION_SAMPLE
};

static enum output_form parse_format(const char *text)
{
    static const char *const names[] = { "text", "summary", "json", "pprof", "folded" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i]) == 0)
            return (enum output_form)i;
    fprintf(stderr, "execinfo_ex_leaks: bad value '%s' for --format: text, summary, json, pprof "
            "or folded\n", text);
    exit(EXIT_TROUBLE);
}

/* The four values a trace has (peak_* are the hooks library's alone). */
static enum profile_value parse_sample(const char *text)
{
    int value = profile_value_by_name(text);
    if (value < 0 || value >= PROFILE_PEAK_OBJECTS) {
        fprintf(stderr, "execinfo_ex_leaks: bad value '%s' for --sample: inuse_space, "
                "inuse_objects, alloc_space or alloc_objects\n", text);
        exit(EXIT_TROUBLE);
    }
    return (enum profile_value)value;
}

static void parse_options(int argc, char **argv, struct options *options)
{
    static const struct option long_options[] = {
        { "stacks", required_argument, NULL, OPTION_STACKS },
        { "frames", required_argument, NULL, OPTION_FRAMES },
        { "summary", no_argument, NULL, OPTION_SUMMARY },
        { "json", no_argument, NULL, OPTION_JSON },
        { "no-progress", no_argument, NULL, OPTION_NO_PROGRESS },
        { "format", required_argument, NULL, OPTION_FORMAT },
        { "sample", required_argument, NULL, OPTION_SAMPLE },
        { "profile-sample", required_argument, NULL, OPTION_SAMPLE },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int summary = 0, json = 0, format = -1, option;

    *options = (struct options){ .stacks = 20, .frames = 16, .progress = 1,
                                 .sample = PROFILE_INUSE_SPACE };
    opterr = 0;
    while ((option = getopt_long(argc, argv, "+hVo:", long_options, NULL)) != -1) {
        switch (option) {
        case OPTION_STACKS: options->stacks = parse_count("--stacks", optarg); break;
        case OPTION_FRAMES: options->frames = parse_count("--frames", optarg); break;
        case OPTION_SUMMARY: summary = 1; break;
        case OPTION_JSON: json = 1; break;
        case OPTION_NO_PROGRESS: options->progress = 0; break;
        case OPTION_FORMAT: format = (int)parse_format(optarg); break;
        case OPTION_SAMPLE: options->sample = parse_sample(optarg); break;
        case 'o': options->output = optarg; break;
        case 'h': usage(stdout); exit(EXIT_NO_LEAK);
        case 'V': puts("execinfo_ex_leaks (execinfo_ex) " EXECINFO_EX_VERSION); exit(EXIT_NO_LEAK);
        default:
            fail_usage("unknown option or missing value: ", argv[optind - 1]);
        }
    }
    if (summary + json + (format >= 0) > 1)
        fail_usage("--summary, --json and --format exclude each other", NULL);
    options->form = format >= 0 ? (enum output_form)format
                  : json ? OUTPUT_JSON : summary ? OUTPUT_SUMMARY : OUTPUT_TEXT;
    if (optind == argc)
        fail_usage("no trace file given (- reads standard input)", NULL);
    if (optind + 2 < argc)
        fail_usage("more than two input files: ", argv[optind + 2]);
    options->input = argv[optind + (optind + 1 < argc)];
    options->before = optind + 1 < argc ? argv[optind] : NULL;
}

static void fail_input(const char *what, const char *input, int error)
{
    fprintf(stderr, "execinfo_ex_leaks: cannot %s '%s': %s\n", what, input, strerror(error));
    exit(EXIT_TROUBLE);
}

static void fail_memory(void)
{
    fputs("execinfo_ex_leaks: out of memory\n", stderr);
    exit(EXIT_TROUBLE);
}

/* The input at PATH, opened, its first bytes read; exit 2 if it cannot be. */
static void open_input(const char *path, struct input *input)
{
    int result = input_open(input, path);
    if (result == -ENOMEM)
        fail_memory(); /* not "cannot open": the input is fine */
    if (result == -EINVAL) {
        fprintf(stderr, "execinfo_ex_leaks: '%s' is %s, not a regular file or a pipe: not read "
                "(- reads standard input)\n", path, input->refused_kind);
        exit(EXIT_TROUBLE);
    }
    if (result == -EISDIR)
        fail_input("read", path, EISDIR);
    if (result < 0)
        fail_input(input->file == NULL ? "open" : "read", path, -result);
}

static void erase_progress(void *context)
{
    progress_finish(context);
}

/* Replay the whole trace into HEAP: INPUT's head, then the rest of it. */
static void read_trace(const struct options *options, struct input *input,
                       struct heap_snapshot *heap)
{
    struct line_reader reader;
    struct trace_replay replay;
    struct progress progress;
    struct line line;
    int status;

    if (line_reader_init(&reader, input->file) < 0)
        fail_memory();
    line_reader_push_back(&reader, input->head, input->head_length);
    progress_init(&progress, stderr, options->progress, input->size);
    trace_replay_init(&replay, heap, input->name, stderr);
    replay.before_message = erase_progress;
    replay.message_context = &progress;
    while ((status = line_reader_next(&reader, &line)) == 1) {
        if (trace_replay_line(&replay, line.text, line.length, line.number, line.too_long) < 0)
            fail_memory();
        if (line.number % PROGRESS_LINES_PER_CHECK == 0)
            progress_update(&progress, line.number, reader.bytes_done);
    }
    progress_finish(&progress);
    if (status < 0)
        fail_input("read", input->path, -status);
    trace_replay_finish(&replay);
    if (!trace_replay_is_trace(&replay)) {
        fprintf(stderr, "execinfo_ex_leaks: %s: not a malloc trace (none of its %" PRIu64
                " lines is an allocation, a free or a stack) nor a saved state blob\n",
                input->name, reader.number);
        exit(EXIT_TROUBLE);
    }
    trace_replay_free(&replay);
    line_reader_free(&reader);
}

/* The profile, through the hooks library's writers (they write to a file
 * descriptor): stdout is flushed first, and written to through its fd. */
static int write_profile(const struct options *options, const struct heap_snapshot *heap,
                         struct symbolizer *symbolizer)
{
    struct heap_profile profile;
    int status = profile_build(&profile, heap, symbolizer);
    if (status == 0) {
        fflush(stdout);
        if (options->form == OUTPUT_PPROF)
            status = profile_write_pprof(&profile, STDOUT_FILENO, 1);
        else
            status = profile_write_folded(&profile, STDOUT_FILENO, options->sample);
        if (status < 0 && status != -ENOMEM) {
            fprintf(stderr, "execinfo_ex_leaks: cannot write the profile: %s\n",
                    strerror(-status));
            exit(EXIT_TROUBLE);
        }
    }
    profile_build_free(&profile);
    return status;
}

/* -o FILE: standard output goes to FILE, created or truncated. */
static void open_output(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        fprintf(stderr, "execinfo_ex_leaks: cannot write '%s': %s\n", path, strerror(errno));
        exit(EXIT_TROUBLE);
    }
    close(fd);
}

static int write_report(const struct options *options, const struct heap_snapshot *heap,
                        const struct sites *sites)
{
    struct symbolizer symbolizer;
    int status = 0;

    if (symbolizer_init(&symbolizer, &heap->frames) < 0)
        fail_memory();
    struct leak_report report = { heap, sites, &symbolizer, options->stacks, options->frames };
    if (options->form == OUTPUT_PPROF || options->form == OUTPUT_FOLDED)
        status = write_profile(options, heap, &symbolizer);
    else if (options->form == OUTPUT_JSON)
        status = report_json_write(stdout, &report);
    else if (options->form == OUTPUT_SUMMARY)
        report_summary_write(stdout, &report);
    else
        status = report_text_write(stdout, &report);
    symbolizer_free(&symbolizer);
    return status;
}

static int is_state_blob(const struct input *input)
{
    return state_reader_is_blob(input->head, input->head_length);
}

static void read_state(struct input *input, struct heap_snapshot *heap)
{
    int result = state_reader_load(heap, input->file, input->head, input->head_length, input->name,
                                   stderr);
    if (result == -ENOMEM)
        fail_memory();
    if (result == -EINVAL)
        exit(EXIT_TROUBLE);
    if (result < 0)
        fail_input("read", input->path, -result);
}

/* The later of two states, less what the earlier one had live already. */
static void read_difference(const struct options *options, struct heap_snapshot *heap)
{
    struct heap_snapshot before;
    struct input earlier, later;
    open_input(options->before, &earlier);
    if (!is_state_blob(&earlier))
        fail_usage("two inputs must both be saved state blobs", NULL);
    open_input(options->input, &later);
    if (!is_state_blob(&later))
        fail_usage("two inputs must both be saved state blobs", NULL);
    if (heap_snapshot_init(&before) < 0)
        fail_memory();
    read_state(&earlier, &before);
    read_state(&later, heap);
    input_close(&earlier);
    input_close(&later);
    state_reader_subtract(heap, &before);
    heap_snapshot_free(&before);
}

/* One input, a state blob or a trace, told apart by its first bytes. */
static void read_input(const struct options *options, struct heap_snapshot *heap)
{
    struct input input;
    open_input(options->input, &input);
    if (is_state_blob(&input))
        read_state(&input, heap);
    else
        read_trace(options, &input, heap);
    input_close(&input);
}

int main(int argc, char **argv)
{
    struct options options;
    struct heap_snapshot heap;
    struct sites sites;

    parse_options(argc, argv, &options);
    if (options.output != NULL)
        open_output(options.output);
    if (heap_snapshot_init(&heap) < 0)
        fail_memory();
    if (options.before != NULL)
        read_difference(&options, &heap);
    else
        read_input(&options, &heap);
    if (sites_group(&heap, &sites) < 0 || write_report(&options, &heap, &sites) < 0)
        fail_memory();
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "execinfo_ex_leaks: cannot write the report: %s\n", strerror(errno));
        return EXIT_TROUBLE;
    }
    int leaks = sites.count > 0;
    sites_free(&sites);
    heap_snapshot_free(&heap);
    return leaks ? EXIT_LEAKS : EXIT_NO_LEAK;
}
