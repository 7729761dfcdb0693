/* The options parser: every value form, and the error for each mistake. */
#define _GNU_SOURCE
#include "base/options.h"
#include <signal.h>
#include <stdio.h>

#include "support.h"

Test(options, defaults_are_own_and_64m)
{
    struct options options;
    options_defaults(&options);
    cr_assert_eq(options.lines, LINES_OWN);
    cr_assert_eq(options.line_memory, (size_t)64 << 20);
}

Test(options, parses_every_known_option)
{
    struct options options;
    char error[128];
    options_defaults(&options);
    cr_assert_eq(options_parse(&options, "lines=main", error, sizeof error), 0);
    cr_assert_eq(options.lines, LINES_MAIN);
    cr_assert_eq(options_parse(&options, "lines=own", error, sizeof error), 0);
    cr_assert_eq(options.lines, LINES_OWN);
    cr_assert_eq(options_parse(&options, "lines=all:line_memory=3K", error, sizeof error), 0);
    cr_assert_eq(options.lines, LINES_ALL);
    cr_assert_eq(options.line_memory, 3072u);
    cr_assert_eq(options_parse(&options, "lines=none::line_memory=2g:", error, sizeof error), 0);
    cr_assert_eq(options.lines, LINES_NONE);
    cr_assert_eq(options.line_memory, (size_t)2 << 30);
    cr_assert_eq(options_parse(&options, NULL, error, sizeof error), 0);
    cr_assert_eq(options_parse(&options, "", error, sizeof error), 0);
}

static void expect_error(const char *text, const char *fragment)
{
    struct options options;
    char error[128];
    options_defaults(&options);
    cr_assert_eq(options_parse(&options, text, error, sizeof error), -EINVAL, "%s", text);
    cr_assert(strstr(error, fragment) != NULL, "'%s' gave '%s'", text, error);
    cr_assert_eq(strchr(error, '\n'), NULL, "one line");
}

Test(options, mistakes_are_named)
{
    expect_error("colour=blue", "unknown option 'colour'");
    expect_error("lines", "has no '=value'");
    expect_error("lines=some", "bad value 'some' for option 'lines'");
    expect_error("line_memory=", "bad value");
    expect_error("line_memory=12Q", "bad value '12Q'");
    expect_error("line_memory=99999999999999999999999", "bad value");
    expect_error("line_memory=17179869184G", "bad value");
    expect_error("lines=all:oops=1", "unknown option 'oops'");
}

Test(options, sizes)
{
    size_t value;
    cr_assert_eq(options_parse_size("0", 1, &value), 0);
    cr_assert_eq(value, 0u);
    cr_assert_eq(options_parse_size("10m", 3, &value), 0);
    cr_assert_eq(value, 10u << 20);
    cr_assert_eq(options_parse_size("k", 1, &value), -EINVAL);
    cr_assert_eq(options_parse_size("1kk", 3, &value), -EINVAL);
}

Test(options, handler_options)
{
    struct options options;
    char error[256];
    options_defaults(&options);
    cr_assert_eq(options.handler, -1);
    cr_assert_eq(options.signals, options_default_signals());
    cr_assert_eq(options.frames, 64);
    cr_assert_eq(options.modules, 1);
    cr_assert_eq(options_parse(&options,
                               "handler=1:signals=SEGV,USR1,7:report=/tmp/r.txt:overwrite=1:"
                               "format=json:frames=20:registers=1:modules=0",
                               error, sizeof error), 0, "%s", error);
    cr_assert_eq(options.handler, 1);
    cr_assert_eq(options.signals, (1ull << SIGSEGV) | (1ull << SIGUSR1) | (1ull << 7));
    cr_assert_str_eq(options.report, "/tmp/r.txt");
    cr_assert_eq(options.overwrite, 1);
    cr_assert_eq(options.format, REPORT_JSON);
    cr_assert_eq(options.frames, 20);
    cr_assert_eq(options.registers, 1);
    cr_assert_eq(options.modules, 0);
    cr_assert_eq(options_parse(&options, "report=stderr:signals=default", error, sizeof error), 0);
    cr_assert_str_eq(options.report, "");
    cr_assert_eq(options.signals, options_default_signals());
}

Test(options, handler_mistakes_are_named)
{
    expect_error("handler=yes", "bad value 'yes' for option 'handler'");
    expect_error("signals=SEGV,", "bad value");
    expect_error("signals=KILL", "bad value");
    expect_error("signals=NOPE", "bad value");
    expect_error("signals=", "bad value");
    expect_error("report=relative/path", "bad value");
    expect_error("frames=0", "bad value");
    expect_error("frames=257", "bad value");
    expect_error("format=xml", "bad value");
}

Test(options, heap_options_and_their_defaults)
{
    struct options options;
    char error[640];
    options_defaults(&options);
    cr_assert_eq(options.heap, 1);
    cr_assert_eq(options.heap_frames, 16);
    cr_assert_eq(options.free_frames, 8);
    cr_assert_eq(options.guard, 16u);
    cr_assert_eq(options.quarantine, (size_t)4 << 20);
    cr_assert_eq(options.alloc_fill, -1);
    cr_assert_eq(options.free_fill, 0xef);
    cr_assert_eq(options.fill_max, (size_t)4 << 10);
    cr_assert_eq(options.on_error, HEAP_ERROR_ABORT);
    cr_assert_eq(options_parse(&options, "heap=0:heap_frames=8:guard=32:quarantine=1M:"
                               "alloc_fill=0xAb:free_fill=off:fill_max=8K:on_error=report",
                               error, sizeof error), 0, "%s", error);
    cr_assert_eq(options.heap, 0);
    cr_assert_eq(options.heap_frames, 8);
    cr_assert_eq(options.guard, 32u);
    cr_assert_eq(options.quarantine, (size_t)1 << 20);
    cr_assert_eq(options.alloc_fill, 0xab);
    cr_assert_eq(options.free_fill, -1);
    cr_assert_eq(options.fill_max, 8192u);
    cr_assert_eq(options.on_error, HEAP_ERROR_REPORT);
    cr_assert_eq(options_parse(&options, "free_fill=200", error, sizeof error), 0);
    cr_assert_eq(options.free_fill, 200);
    cr_assert_eq(options_parse(&options, "free_frames=0", error, sizeof error), 0);
    cr_assert_eq(options.free_frames, 0);
    cr_assert_eq(options_parse(&options, "free_frames=64", error, sizeof error), 0);
    cr_assert_eq(options.free_frames, 64);
    const char *bad[] = { "heap_frames=0", "heap_frames=65", "guard=4097", "alloc_fill=256",
                          "alloc_fill=0x100", "free_fill=0xzz", "free_fill=1k", "on_error=exit",
                          "quarantine=-1", "heap=2", "free_frames=65", "free_frames=-1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(options_parse(&options, bad[i], error, sizeof error), -EINVAL, "%s", bad[i]);
}

Test(options, the_unknown_option_message_lists_every_name)
{
    struct options options;
    char error[1024];
    options_defaults(&options);
    cr_assert_eq(options_parse(&options, "colour=blue", error, sizeof error), -EINVAL);
    cr_assert(strstr(error, "(known: lines, line_memory,"), "%s", error);
    cr_assert(strstr(error, ", exit_check, threads, threads_timeout_ms, dump_signal, minidump, "
                            "profile, profile_format, profile_sample, leak_check, leak_exitcode, "
                            "error_exitcode, suppressions, guard_pages, guard_pages_max, "
                            "guard_pages_budget, sample, sample_seed)"), "%s", error);
}

Test(options, guard_pages_and_sample)
{
    struct options options;
    char error[256];
    options_defaults(&options);
    cr_assert_eq(options.guard_pages, 0);
    cr_assert_eq(options.guard_pages_max, (size_t)128 << 20);
    cr_assert_eq(options.guard_pages_budget, 0u);
    cr_assert_eq(options.sample, 0u);
    cr_assert_eq(options_parse(&options, "guard_pages=before:guard_pages_max=1M:"
                                         "guard_pages_budget=100:sample=1000:sample_seed=42",
                               error, sizeof error), 0, "%s", error);
    cr_assert_eq(options.guard_pages, 2);
    cr_assert_eq(options.guard_pages_max, (size_t)1 << 20);
    cr_assert_eq(options.guard_pages_budget, 100u);
    cr_assert_eq(options.sample, 1000u);
    cr_assert_eq(options.sample_seed, 42u);
    cr_assert_eq(options_parse(&options, "guard_pages=after", error, sizeof error), 0);
    cr_assert_eq(options.guard_pages, 1);
    cr_assert_eq(options_parse(&options, "guard_pages=1", error, sizeof error), 0);
    cr_assert_eq(options.guard_pages, 1);
    const char *bad[] = { "guard_pages=2", "guard_pages=yes", "guard_pages_max=129M",
                          "sample=-1", "sample_seed=1k", "sample=2G" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(options_parse(&options, bad[i], error, sizeof error), -EINVAL, "%s", bad[i]);
}

Test(options, heap_profile_options)
{
    struct options options;
    char error[640];
    options_defaults(&options);
    cr_assert_str_eq(options.profile, "");
    cr_assert_eq(options.profile_format, PROFILE_FORMAT_PPROF);
    cr_assert_eq(options.profile_sample, 3); /* inuse_space */
    cr_assert_eq(options_parse(&options, "profile=/tmp/heap-%p.pb.gz:profile_format=folded:"
                                         "profile_sample=alloc_objects", error, sizeof error), 0, "%s", error);
    cr_assert_str_eq(options.profile, "/tmp/heap-%p.pb.gz");
    cr_assert_eq(options.profile_format, PROFILE_FORMAT_FOLDED);
    cr_assert_eq(options.profile_sample, 0);
    const char *const samples[] = { "alloc_objects", "alloc_space", "inuse_objects",
                                    "inuse_space", "peak_objects", "peak_space" };
    for (int i = 0; i < 6; i++) {
        char text[64];
        snprintf(text, sizeof text, "profile_sample=%s", samples[i]);
        cr_assert_eq(options_parse(&options, text, error, sizeof error), 0, "%s", text);
        cr_assert_eq(options.profile_sample, i, "%s", text);
    }
    cr_assert_eq(options_parse(&options, "profile=", error, sizeof error), 0);
    cr_assert_str_eq(options.profile, "");
    const char *bad[] = { "profile=heap.pb.gz", "profile_format=proto", "profile_sample=space",
                          "profile_sample=" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(options_parse(&options, bad[i], error, sizeof error), -EINVAL, "%s", bad[i]);
}

Test(options, the_leak_checks_options)
{
    struct options options;
    char error[256];
    options_defaults(&options);
    cr_assert_eq(options.leak_check, 0);
    cr_assert_eq(options.leak_exitcode, -1, "the program's status by default");
    cr_assert_eq(options.error_exitcode, -1);
    cr_assert_str_eq(options.suppressions, "");
    cr_assert_eq(options_parse(&options, "leak_check=1:leak_exitcode=23:error_exitcode=0:"
                                         "suppressions=/etc/leaks.supp", error, sizeof error), 0);
    cr_assert_eq(options.leak_check, 1);
    cr_assert_eq(options.leak_exitcode, 23);
    cr_assert_eq(options.error_exitcode, 0);
    cr_assert_str_eq(options.suppressions, "/etc/leaks.supp");
    cr_assert_eq(options_parse(&options, "leak_exitcode=256", error, sizeof error), -EINVAL);
    cr_assert_eq(options_parse(&options, "leak_exitcode=1K", error, sizeof error), -EINVAL);
    cr_assert_eq(options_parse(&options, "suppressions=leaks.supp", error, sizeof error), -EINVAL);
    cr_assert_eq(options.leak_exitcode, 23, "a bad value leaves the option as it was");
}

Test(options, minidump_is_an_absolute_path_or_off)
{
    struct options options;
    char error[256];
    options_defaults(&options);
    cr_assert_str_eq(options.minidump, "");
    cr_assert_eq(options_parse(&options, "minidump=/var/crash/dump-%p.dmp", error, sizeof error), 0);
    cr_assert_str_eq(options.minidump, "/var/crash/dump-%p.dmp");
    cr_assert_eq(options_parse(&options, "minidump=", error, sizeof error), 0);
    cr_assert_str_eq(options.minidump, "");
    cr_assert_eq(options_parse(&options, "minidump=crash.dmp", error, sizeof error), -EINVAL);
    cr_assert(strstr(error, "bad value 'crash.dmp' for option 'minidump'"), "%s", error);
}

Test(options, exit_check_is_a_flag_on_by_default)
{
    struct options options;
    char error[640];
    options_defaults(&options);
    cr_assert_eq(options.exit_check, 1);
    cr_assert_eq(options_parse(&options, "exit_check=0", error, sizeof error), 0, "%s", error);
    cr_assert_eq(options.exit_check, 0);
    cr_assert_eq(options_parse(&options, "exit_check=2", error, sizeof error), -EINVAL);
    cr_assert_eq(options.exit_check, 0);
}

Test(options, mtrace_frames_is_bounded)
{
    struct options options;
    char error[640];
    options_defaults(&options);
    cr_assert_eq(options.mtrace_frames, 0);
    cr_assert_eq(options_parse(&options, "mtrace_frames=12", error, sizeof error), 0, "%s", error);
    cr_assert_eq(options.mtrace_frames, 12);
    cr_assert_eq(options_parse(&options, "mtrace_frames=65", error, sizeof error), -EINVAL);
    cr_assert(strstr(error, "mtrace_frames"), "%s", error);
    cr_assert_eq(options.mtrace_frames, 12, "a refused value changes nothing");
}

Test(options, threads_and_their_deadline)
{
    struct options options;
    char error[128];
    options_defaults(&options);
    cr_assert_eq(options.threads, 1024);
    cr_assert_eq(options.threads_timeout_ms, 1000);
    cr_assert_eq(options.dump_signal, 0);
    cr_assert_eq(options_parse(&options, "threads=1:threads_timeout_ms=250", error, sizeof error), 0);
    cr_assert_eq(options.threads, 1);
    cr_assert_eq(options.threads_timeout_ms, 250);
    cr_assert_eq(options_parse(&options, "threads=16384", error, sizeof error), 0);
    cr_assert_eq(options.threads, 16384);
    expect_error("threads=0", "bad value '0' for option 'threads'");
    expect_error("threads=16385", "bad value '16385'");
    expect_error("threads_timeout_ms=0", "threads_timeout_ms");
    expect_error("threads_timeout_ms=60001", "threads_timeout_ms");
    expect_error("threads=many", "threads");
}

Test(options, signals_by_name_with_or_without_sig_or_by_number)
{
    cr_assert_eq(options_parse_signal("SIGQUIT", 7), SIGQUIT);
    cr_assert_eq(options_parse_signal("QUIT", 4), SIGQUIT);
    cr_assert_eq(options_parse_signal("3", 1), SIGQUIT);
    cr_assert_eq(options_parse_signal("SIGRTMIN+2", 10), SIGRTMIN + 2);
    cr_assert_eq(options_parse_signal("RTMAX", 5), -EINVAL, "64 does not fit the signal sets");
    cr_assert_eq(options_parse_signal("RTMAX-1", 7), SIGRTMAX - 1);
    cr_assert_eq(options_parse_signal("quit", 4), -EINVAL, "upper case, as kill -l");
    cr_assert_eq(options_parse_signal("SIG3", 4), -EINVAL);
    cr_assert_eq(options_parse_signal("64", 2), -EINVAL);
    cr_assert_eq(options_parse_signal("0", 1), -EINVAL);
    cr_assert_eq(options_parse_signal("RTMIN+99", 8), -EINVAL);
    cr_assert_eq(options_parse_signal("", 0), -EINVAL);

    struct options options;
    char error[128];
    options_defaults(&options);
    cr_assert_eq(options_parse(&options, "signals=SIGSEGV,BUS,6", error, sizeof error), 0);
    cr_assert_eq(options.signals, (1ull << SIGSEGV) | (1ull << SIGBUS) | (1ull << SIGABRT));
    cr_assert_eq(options_parse(&options, "dump_signal=SIGQUIT", error, sizeof error), 0);
    cr_assert_eq(options.dump_signal, SIGQUIT);
    cr_assert_eq(options_parse(&options, "dump_signal=USR1", error, sizeof error), 0);
    cr_assert_eq(options.dump_signal, SIGUSR1);
    cr_assert_eq(options_parse(&options, "dump_signal=0", error, sizeof error), 0);
    cr_assert_eq(options.dump_signal, 0);
    expect_error("dump_signal=KILL", "dump_signal");
    expect_error("dump_signal=SIGSTOP", "dump_signal");
    expect_error("dump_signal=61", "dump_signal"); /* the threads answer on it */
    expect_error("signals=SIGKILL", "signals");
    expect_error("signals=SEGV,", "signals");
    expect_error("signals=RTMAX", "signals"); /* found by fuzz_options: bit 64 */
}
