/* handler_config.c: the installer's settings, handed to the handler.
 * World: publish is normal (one writer, under the installer's lock); view
 * is signal-safe (atomics and memcpy only).
 *
 * A latch (two copies and a sequence number, as Linux's seqcount_latch):
 * while the writer changes one copy, readers are sent to the other, so a
 * reader never waits and never reads a copy being written, even when the
 * signal interrupted the writer itself on the same thread. A reader that
 * sees the sequence move while it copied (a second publish overtook it on
 * another thread) copies again. */
#include "handler.h"
#include "../base/load_touched.h"

#include <stdatomic.h>
#include <string.h>

#define VIEW_ATTEMPTS 64

/* The installer's draft beside the copies: a load writes the draft and
 * one copy, 6.7 KiB in a row, not three copies on five pages (issue 26). */
static struct {
    struct handler_config draft;
    struct handler_config copies[2];
} configs;
static LOAD_TOUCHED atomic_uint sequence;   /* even: copies[0] is the current one, odd: copies[1] */
static LOAD_TOUCHED int second_copy_written;

struct handler_config *handler_config_draft(void)
{
    return &configs.draft;
}

void handler_config_publish(const struct handler_config *config)
{
    /* configs.copies[1] is written from the second publish on: no reader reads it
     * before a publish has made the sequence odd once, and a process that
     * publishes once, at load, then writes one page fewer. Brought up to
     * date while readers are still sent to configs.copies[0]. */
    if (!second_copy_written && atomic_load_explicit(&sequence, memory_order_relaxed) != 0) {
        configs.copies[1] = configs.copies[0];
        second_copy_written = 1;
    }
    atomic_fetch_add_explicit(&sequence, 1, memory_order_acq_rel); /* readers: configs.copies[1] */
    atomic_thread_fence(memory_order_release);
    configs.copies[0] = *config;
    atomic_fetch_add_explicit(&sequence, 1, memory_order_acq_rel); /* readers: configs.copies[0] */
    atomic_thread_fence(memory_order_release);
    if (second_copy_written)
        configs.copies[1] = *config;
}

static void copy_view(const struct handler_config *from, int signo, struct handler_view *view)
{
    memcpy(&view->options, &from->options, sizeof view->options);
    saved_action_give(&from->previous[signo], &view->previous);
    memcpy(&view->callbacks, &from->callbacks, sizeof view->callbacks);
}

void handler_config_view(int signo, struct handler_view *view)
{
    if (signo <= 0 || signo >= HANDLER_SIGNALS)
        signo = 0;
    /* Bounded: publishes come from a mutex-serialised installer, so more
     * than a few overtakes in a row do not happen; the last copy is kept. */
    for (int attempt = 0; attempt < VIEW_ATTEMPTS; attempt++) {
        unsigned seen = atomic_load_explicit(&sequence, memory_order_acquire);
        copy_view(&configs.copies[seen & 1], signo, view);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&sequence, memory_order_relaxed) == seen)
            return;
    }
}
