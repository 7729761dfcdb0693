/* report_minidump.c: the minidump of a crash, written where minidump=
 * says, and one line (or JSON member) of the report naming it.
 * World: signal-safe (the minidump writer, text_out, the published index). */
#include "report_minidump.h"
#include "../base/json_out.h"
#include "../base/text_out.h"
#include "../minidump/minidump_path.h"
#include "../symbolize/index.h"

static void tell(int fd, int json, const struct minidump_outcome *outcome)
{
    char buffer[MINIDUMP_PATH_MAX + 96];
    struct text_out out;
    uint64_t error = (uint64_t)(outcome->error < 0 ? -outcome->error : 0);
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    if (json) {
        json_key(&out, "minidump", 0);
        text_out_char(&out, '{');
        json_key(&out, "path", 1);
        json_string(&out, outcome->path);
        json_key(&out, "errno", 0);
        if (error == 0)
            text_out_string(&out, "null");
        else
            text_out_decimal(&out, error);
        text_out_string(&out, "}\n");
    } else {
        text_out_string(&out, "*** minidump: ");
        text_out_string(&out, outcome->path);
        if (error != 0) {
            text_out_string(&out, " failed (errno ");
            text_out_decimal(&out, error);
            text_out_char(&out, ')');
        }
        text_out_char(&out, '\n');
    }
    text_out_end_line(&out);
    text_out_flush(&out);
}

void report_minidump(int fd, int json, const struct options *options,
                     const struct crash_facts *facts, const struct thread_set *threads)
{
    static struct minidump_outcome outcome; /* one crash reports at a time (handler.c) */
    if (options->minidump[0] == '\0')
        return;
    struct minidump_input input = { facts, threads, index_acquire() };
    minidump_write_to_path(options->minidump, &input, &outcome);
    index_release();
    tell(fd, json, &outcome);
}
