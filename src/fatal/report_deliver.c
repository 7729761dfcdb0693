/* report_deliver.c: gather, write, release: the steps a crash report and
 * a dump share.
 * World: signal-safe (thread_gather, text_out, the published index). */
#include "report_deliver.h"
#include "report.h"
#include "report_destination.h"
#include "../symbolize/index.h"
#include "../threads/thread_gather.h"

static const struct thread_set *gather(const struct report_request *request)
{
    const struct options *options = request->options;
    if (options->threads <= 1)
        return NULL; /* threads=1: the report of old, the one thread */
    struct gather_settings settings = {
        .cap = options->threads,
        .timeout_ms = options->threads_timeout_ms,
        .frames = options->frames,
    };
    thread_gather(request->threads, &settings);
    return request->threads;
}

static int thread_total(const struct thread_set *threads)
{
    return 1 + (threads != NULL ? threads->count : 0);
}

int report_deliver(const struct crash_facts *facts, struct report_request *request)
{
    const struct options *options = request->options;
    struct report_settings settings = { options->registers, options->modules, request->lead,
                                        request->context, request->stage };
    struct report_destination destination = { .fd = request->fd };
    struct text_out out;

    const struct thread_set *threads = gather(request);
    if (request->fd < 0)
        report_destination_open(&destination, options);
    text_out_init_fd(&out, destination.fd, request->buffer, request->buffer_size);
    report_destination_fall_back(&destination, &out);
    const struct index_snapshot *snapshot = index_acquire();
    /* With the other threads held: their frames are asked about too. */
    if (request->stage != NULL)
        second_stage_run(request->stage, facts, threads, snapshot, options);
    if (request->json)
        report_json(&out, facts, threads, snapshot, &settings);
    else
        report_text(&out, facts, threads, snapshot, &settings);
    index_release();
    text_out_flush(&out);
    if (request->middle != NULL)
        request->middle(out.fd, request->context); /* to whichever fd is in use now */
    if (request->json)
        report_json_end(&out);
    else
        report_text_end(&out);
    int error = text_out_flush(&out);
    report_destination_close(&destination);
    request->stopped = threads != NULL;
    if (!request->keep_stopped)
        report_deliver_release(request);
    /* The symbolizer stored into the index cache while the report was
     * written: reaped only now, within its deadline. */
    if (request->stage != NULL)
        second_stage_finish(request->stage);
    return error < 0 && out.fd == request->fd ? error : thread_total(threads);
}

void report_deliver_release(struct report_request *request)
{
    if (request->stopped)
        thread_gather_release(request->threads);
    request->stopped = 0;
}
