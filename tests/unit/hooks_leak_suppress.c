/* The leak check's suppressions alone: LSan's template language and the
 * file's lines (src/hooks/leak_suppress.c). */
#define _GNU_SOURCE
#include "hooks/leak_suppress.h"
#include "support.h"

#include <stdio.h>

/* What sanitizer_common's TemplateMatch answers for each (its tests). */
Test(leak_suppress, templates_match_as_lsans)
{
    static const struct {
        const char *pattern, *text;
        int match;
    } cases[] = {
        { "foo", "foo", 1 },          { "foo", "xfooy", 1 },      { "foo", "fo", 0 },
        { "^foo", "foobar", 1 },      { "^foo", "xfoo", 0 },      { "foo$", "xfoo", 1 },
        { "foo$", "foox", 0 },        { "^foo$", "foo", 1 },      { "^foo$", "foox", 0 },
        { "f*o", "fxxo", 1 },         { "f*o", "of", 0 },         { "*", "anything", 1 },
        { "^*bar", "foobar", 1 },     { "foo*$", "foox", 1 },     { "a*b*c", "aXbYc", 1 },
        { "a*b*c", "acb", 0 },        { "operator[]", "std::vector<int>::operator[](unsigned long)", 1 },
        { "foo", "", 0 },             { "foo", NULL, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(leak_template_match(cases[i].pattern, cases[i].text), cases[i].match,
                     "'%s' against '%s'", cases[i].pattern, cases[i].text ? cases[i].text : "(null)");
}

Test(leak_suppress, a_file_gives_its_leak_lines_after_the_built_in_ones)
{
    char path[] = "/tmp/execinfo_ex_supp_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *text = "# a comment\n\n  leak:lost_block  \nleak:^cycle_node$\r\n"
                       "race:not_ours\nleak:\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct leak_suppressions list;
    cr_assert_eq(leak_suppressions_load(&list, path), 0);
    unlink(path);
    cr_assert_eq(list.error, 0);
    cr_assert_eq(list.unknown, 2, "race: and an empty leak: are not leak patterns");
    cr_assert_geq(list.count, 3);
    size_t built_in = list.count - 2;
    for (size_t i = 0; i < built_in; i++)
        cr_assert_not_null(list.items[i].why, "a built-in suppression says why");
    cr_assert_str_eq(list.items[built_in].pattern, "lost_block");
    cr_assert_null(list.items[built_in].why);
    cr_assert_str_eq(list.items[built_in + 1].pattern, "^cycle_node$");
    leak_suppressions_free(&list);
}

Test(leak_suppress, an_unreadable_file_is_noted_not_fatal)
{
    struct leak_suppressions list;
    cr_assert_eq(leak_suppressions_load(&list, "/nonexistent/leaks.supp"), 0);
    cr_assert_eq(list.error, ENOENT);
    cr_assert_gt(list.count, 0, "the built-in list stays");
    leak_suppressions_free(&list);
}
