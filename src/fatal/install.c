/* install.c: backtrace_install_fatal_handler and its LD_PRELOAD twin.
 * World: normal (options parsing, mmap, a mutex, the index build).
 *
 * Installing publishes the symbol index first, so that the handler only
 * reads (a preloaded library leaves modules without a warm cache file
 * unread: the handler names them from their files and the second stage,
 * src/fatal/second_stage.c); gives the calling thread, and every thread created from then on,
 * an alternate signal stack if it has none, so that a stack overflow
 * still gets its report; and remembers every previous action, for
 * chaining and for uninstalling. */
#define _GNU_SOURCE
#include "execinfo_ex.h"
#include "alternate_stack.h"
#include "dump.h"
#include "handler.h"
#include "second_stage.h"
#include "second_stage_launch.h"
#include "symbolizer_path.h"
#include "../base/environment.h"
#include "../base/fd_write.h"
#include "../base/load_touched.h"
#include "../symbolize/index.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static LOAD_TOUCHED pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
/* The installer's copy of the config, under install_lock. */
static struct handler_config *staged(void)
{
    return handler_config_draft();
}

static int is_ours(const struct saved_action *action)
{
    return (action->flags & SA_SIGINFO) &&
           (action->action == fatal_signal_handler || action->action == dump_signal_handler);
}

/* Whether SIGNO is one to install: a fatal one of SIGNALS, or the dump
 * signal (which is not one of them even if signals= names it too). */
static int wanted(int signo, uint64_t signals, int dump_signal)
{
    if (signo == dump_signal)
        return dump_signal > 0;
    return signo < HANDLER_SIGNALS - 1 && (signals & ((uint64_t)1 << signo)) != 0;
}

/* The previous actions are published before ours go in, so that a signal
 * arriving in between already knows where to chain; one that changed in
 * the meantime (what sigaction returned) is published again after. All
 * signals in one publish, not one each: a publish copies the whole
 * config twice (23 KB), and handler=1 made nine of them at load (issue
 * 26; the gain is small beside the load's page faults, which stay). */
/* qemu-user (7.2) reads a SIGSEGV or SIGBUS queued with a fault's si_code
 * as a fault of its own translated code and aborts (a cpu_exec assertion,
 * exit 127) instead of delivering it: there the handler dies by a plain
 * tgkill. qemu-user is recognised by the vDSO it does not map (every
 * Linux kernel maps one, unless booted with vdso=0, where a plain signal
 * is no loss). Here, not in the handler: getauxval is not signal-safe. */
static void note_platform(void)
{
    fatal_handler_queue_plainly = getauxval(AT_SYSINFO_EHDR) == 0;
    second_stage_emulated = fatal_handler_queue_plainly;
}

static int same_action(const struct saved_action *a, const struct saved_action *b)
{
    return a->action == b->action && a->flags == b->flags && a->mask == b->mask;
}

/* The action of SIGNO kept in *SAVED (sigaction's NEW: ours, or NULL to
 * ask only); -1 when sigaction fails. */
static int exchange_action(int signo, const struct sigaction *new, struct saved_action *saved)
{
    struct sigaction old;
    if (sigaction(signo, new, &old) != 0)
        return -1;
    saved_action_keep(saved, &old);
    return 0;
}

static void install_signals(uint64_t signals, int dump_signal)
{
    /* Kept small: the install runs in every process, on a stack that has
     * not grown yet (a sigaction array was 10 KiB of it). */
    struct saved_action before[HANDLER_SIGNALS];
    char queried[HANDLER_SIGNALS] = { 0 }; /* a mask would need bit 64 */
    note_platform();
    for (int signo = 1; signo < HANDLER_SIGNALS; signo++) {
        if (!wanted(signo, signals, dump_signal) || exchange_action(signo, NULL, &before[signo]) != 0)
            continue;
        queried[signo] = 1;
        if (!is_ours(&before[signo]))
            staged()->previous[signo] = before[signo];
    }
    handler_config_publish(staged());
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    int changed = 0;
    for (int signo = 1; signo < HANDLER_SIGNALS; signo++) {
        struct saved_action previous;
        if (!queried[signo])
            continue;
        ours.sa_sigaction = signo == dump_signal ? dump_signal_handler : fatal_signal_handler;
        if (exchange_action(signo, &ours, &previous) != 0)
            continue;
        if (!is_ours(&previous) && !same_action(&previous, &before[signo])) {
            staged()->previous[signo] = previous;
            changed = 1;
        }
        staged()->installed |= (uint64_t)1 << signo;
    }
    if (changed)
        handler_config_publish(staged());
}

static void report_bad_options(const char *error)
{
    size_t length = strlen(error);
    char line[640];
    if (length > sizeof line - 2)
        length = sizeof line - 2;
    memcpy(line, error, length);
    line[length] = '\n';
    fd_write_all(STDERR_FILENO, line, length + 1);
}

/* What the second stage reads of the environment: where the index cache
 * is, the options, the debug roots (src/symbolize/debug_roots.c); and,
 * under qemu-user, what the emulator that binfmt_misc starts for it reads
 * to find the target's loader and CPU (without them it exits 255). */
static void pass_environment(void)
{
    static const char *const names[] = { "HOME", "XDG_CACHE_HOME", "EXECINFO_EX_OPTIONS",
                                         "EXECINFO_EX_DEBUG_ROOT",
                                         "EXECINFO_EX_SYSTEM_DEBUG_ROOT", "QEMU_LD_PREFIX",
                                         "QEMU_CPU" };
    stage_environment_clear();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = secure_getenv(names[i]);
        if (value != NULL)
            stage_environment_add(names[i], value);
    }
}

static int install(const char *options)
{
    struct options parsed = *environment_options();
    char error[600];

    if (options_parse(&parsed, options, error, sizeof error) < 0) {
        report_bad_options(error);
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&install_lock);
    index_refresh_light(); /* the handler reads cold modules' symbols itself */
    alternate_stack_give_installing_thread();
    alternate_stack_for_new_threads(1);
    if (parsed.symbolizer[0] == '\0')
        symbolizer_path_find(parsed.symbolizer, sizeof parsed.symbolizer);
    /* set-user-ID and the like: no program started with their rights
     * from a crash whose environment the user chose. */
    if (getauxval(AT_SECURE))
        parsed.second_stage = 0;
    pass_environment();
    staged()->options = parsed;
    install_signals(parsed.signals, parsed.dump_signal); /* publishes the options too */
    pthread_mutex_unlock(&install_lock);
    return 0;
}

__attribute__((visibility("default")))
int backtrace_install_fatal_handler(const char *options)
{
    return install(options);
}

__attribute__((visibility("default")))
void backtrace_uninstall_fatal_handler(void)
{
    pthread_mutex_lock(&install_lock);
    /* A handler still running keeps the view it copied: the previous
     * actions stay published until ours are all gone. */
    for (int signo = 1; signo < HANDLER_SIGNALS - 1; signo++) {
        if (!(staged()->installed & ((uint64_t)1 << signo)))
            continue;
        struct saved_action current;
        struct sigaction previous;
        /* Leave alone a handler someone installed over ours. */
        if (exchange_action(signo, NULL, &current) == 0 && is_ours(&current)) {
            saved_action_give(&staged()->previous[signo], &previous);
            sigaction(signo, &previous, NULL);
        }
    }
    memset(staged()->previous, 0, sizeof staged()->previous);
    staged()->installed = 0;
    handler_config_publish(staged());
    alternate_stack_for_new_threads(0);
    pthread_mutex_unlock(&install_lock);
}

__attribute__((visibility("default")))
int backtrace_set_crash_callback(backtrace_crash_callback *callback, void *context)
{
    pthread_mutex_lock(&install_lock);
    staged()->callbacks.set = callback;
    staged()->callbacks.set_context = callback != NULL ? context : NULL;
    handler_config_publish(staged());
    pthread_mutex_unlock(&install_lock);
    return 0;
}

__attribute__((visibility("default")))
int backtrace_set_crash_lead(backtrace_crash_lead *lead, void *context)
{
    pthread_mutex_lock(&install_lock);
    staged()->callbacks.lead = lead;
    staged()->callbacks.lead_context = lead != NULL ? context : NULL;
    handler_config_publish(staged());
    pthread_mutex_unlock(&install_lock);
    return 0;
}

/* The slot of CALLBACK with CONTEXT among the added ones, or -1. */
static int added_slot(handler_callback *callback, void *context)
{
    for (int i = 0; i < HANDLER_ADDED_CALLBACKS; i++)
        if (staged()->callbacks.added[i] == callback && staged()->callbacks.added_context[i] == context)
            return i;
    return -1;
}

__attribute__((visibility("default")))
int backtrace_add_crash_callback(backtrace_crash_callback *callback, void *context)
{
    if (callback == NULL) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&install_lock);
    int slot = added_slot(callback, context);
    if (slot < 0)
        slot = added_slot(NULL, NULL);
    if (slot >= 0) {
        staged()->callbacks.added[slot] = callback;
        staged()->callbacks.added_context[slot] = context;
        handler_config_publish(staged());
    }
    pthread_mutex_unlock(&install_lock);
    if (slot < 0)
        errno = ENOSPC;
    return slot >= 0 ? 0 : -1;
}

__attribute__((visibility("default")))
int backtrace_remove_crash_callback(backtrace_crash_callback *callback, void *context)
{
    pthread_mutex_lock(&install_lock);
    int slot = callback != NULL ? added_slot(callback, context) : -1;
    if (slot >= 0) {
        staged()->callbacks.added[slot] = NULL;
        staged()->callbacks.added_context[slot] = NULL;
        handler_config_publish(staged());
    }
    pthread_mutex_unlock(&install_lock);
    if (slot < 0)
        errno = ENOENT;
    return slot >= 0 ? 0 : -1;
}

/* LD_PRELOAD=libexecinfo_ex.so EXECINFO_EX_OPTIONS=handler=1 program */
__attribute__((constructor))
static void install_from_environment(void)
{
    int saved_errno = errno; /* main starts with errno 0, whatever the install did */
    if (environment_options()->handler == 1)
        install(NULL); /* not by the exported name: no PLT entry to bind at load */
    errno = saved_errno;
}
