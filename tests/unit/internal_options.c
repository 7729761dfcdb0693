/* The options parser: every value form, and the error for each mistake. */
#define _GNU_SOURCE
#include "base/options.h"
#include "support.h"

Test(options, defaults_are_main_and_64m)
{
    struct options options;
    options_defaults(&options);
    cr_assert_eq(options.lines, LINES_MAIN);
    cr_assert_eq(options.line_memory, (size_t)64 << 20);
}

Test(options, parses_every_known_option)
{
    struct options options;
    char error[128];
    options_defaults(&options);
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
