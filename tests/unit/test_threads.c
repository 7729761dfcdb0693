/* Every thread in the crash report (issue 23): each test crashes for real
 * in a child process (or dumps there and lives on) with other threads in
 * states of every kind, and checks how it died and what it wrote.
 *
 * The children say what the parent cannot know (their threads' tids, the
 * lines of the calls their threads block in) as "@key=value" lines on
 * stderr before they crash. Every wait on another thread is a wait for a
 * condition (a tid published, a state letter in /proc), bounded: never a
 * sleep that hopes the other side is ready. */
#define _GNU_SOURCE
#include <dirent.h>
#include <execinfo_ex.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>

#include "support.h"
#include "crash_helpers.h"

#define REQUEST_SIGNAL 61 /* the library's THREAD_REQUEST_SIGNAL */

#ifndef __SANITIZE_ADDRESS__ /* a malloc of ours would replace ASan's (tests/sanitize/sanitize.mk) */
/* ---- the malloc trap (case 13), as in test_signal_safety.c ----
 * Interposed for the whole program (this executable is linked with
 * -rdynamic, so the library's calls land here too). Off, it passes every
 * call through; counting, it counts; armed, it also says so on stderr,
 * where the test looks for "TRAP:". */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

enum { TRAP_OFF, TRAP_COUNT, TRAP_ARMED };
static atomic_int trap_mode;
static atomic_int trap_count;

static void trap(const char *what)
{
    int mode = atomic_load(&trap_mode);
    if (mode == TRAP_OFF)
        return;
    atomic_fetch_add(&trap_count, 1);
    if (mode == TRAP_ARMED) {
        static const char message[] = "TRAP: allocation while gathering: ";
        write(2, message, sizeof message - 1);
        write(2, what, strlen(what));
        write(2, "\n", 1);
    }
}

void *malloc(size_t size) { trap("malloc"); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { trap("calloc"); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { trap("realloc"); return __libc_realloc(p, size); }
void free(void *p) { if (p) trap("free"); __libc_free(p); }
void *memalign(size_t a, size_t size) { trap("memalign"); return __libc_memalign(a, size); }
void *aligned_alloc(size_t a, size_t size) { trap("aligned_alloc"); return __libc_memalign(a, size); }
int posix_memalign(void **out, size_t a, size_t size)
{
    trap("posix_memalign");
    *out = __libc_memalign(a, size);
    return *out ? 0 : ENOMEM;
}


#endif
/* ---- the child's side: threads, their states, what they say ---- */

/* A check inside a child: on failure, say why on stderr and exit 1 (the
 * parent's assert_exited_with or assert_died_by then shows it). */
#define CHILD_CHECK(condition, ...)                                   \
    do {                                                              \
        if (!(condition)) {                                           \
            dprintf(2, "CHILD CHECK FAILED (%s:%d): ", __FILE__, __LINE__); \
            dprintf(2, __VA_ARGS__);                                  \
            dprintf(2, "\n");                                         \
            _exit(1);                                                 \
        }                                                             \
    } while (0)

static void say(const char *key, long value)
{
    dprintf(2, "@%s=%ld\n", key, value);
}

static void pause_ms(int ms)
{
    struct timespec step = { ms / 1000, (long)(ms % 1000) * 1000000 };
    while (nanosleep(&step, &step) != 0 && errno == EINTR) {
    }
}

/* One thread of a child: its name, and the tid it publishes once it has
 * named itself and is about to block. LINE: the line of the call it
 * blocks in, which its frame must show. */
struct worker {
    const char *name;
    atomic_int tid;
    atomic_int line;
    pthread_t thread;
};

static void worker_begin(struct worker *worker)
{
    prctl(PR_SET_NAME, worker->name);
    atomic_store(&worker->tid, (int)gettid());
}

/* Start BODY(WORKER) and wait (bounded) until it has published its tid. */
static pid_t start_worker(void *(*body)(void *), struct worker *worker)
{
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    atomic_store(&worker->tid, 0);
    int error = pthread_create(&worker->thread, &attributes, body, worker);
    pthread_attr_destroy(&attributes);
    CHILD_CHECK(error == 0, "pthread_create %s: %s", worker->name, strerror(error));
    for (int i = 0; i < 20000 && atomic_load(&worker->tid) == 0; i++)
        pause_ms(1);
    CHILD_CHECK(atomic_load(&worker->tid) != 0, "thread %s never started", worker->name);
    return atomic_load(&worker->tid);
}

/* The state letter of TID in /proc/self/task/TID/stat, 0 if gone. */
static char task_state(pid_t tid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0)
        return 0;
    text[length] = '\0';
    char *close_paren = strrchr(text, ')');
    return close_paren != NULL && close_paren[1] == ' ' ? close_paren[2] : 0;
}

/* Wait (bounded: 10 s) until TID is in one of STATES: it has reached the
 * call it blocks in, not merely published its tid. */
static void wait_for_state(pid_t tid, const char *states)
{
    char state = 0;
    for (int i = 0; i < 10000; i++) {
        state = task_state(tid);
        if (state != 0 && strchr(states, state) != NULL)
            return;
        pause_ms(1);
    }
    CHILD_CHECK(0, "thread %d stayed in state '%c', want one of \"%s\"", (int)tid, state, states);
}

static void wait_until_gone(pid_t tid)
{
    for (int i = 0; i < 10000 && task_state(tid) != 0; i++)
        pause_ms(1);
    CHILD_CHECK(task_state(tid) == 0, "thread %d is still listed", (int)tid);
}

/* ---- thread bodies: named, not inlined, so that their frames show them;
 * each records the line of the call it blocks in (same line as the call) */

static int never_written[2] = { -1, -1 }; /* a pipe nobody writes to: read() blocks */
static volatile unsigned long spins;

__attribute__((noinline)) static void *sleeper_body(void *opaque)
{
    struct worker *worker = opaque;
    worker_begin(worker);
    for (;;) { atomic_store(&worker->line, __LINE__); sleep(100); }
    return NULL;
}

__attribute__((noinline)) static void *reader_body(void *opaque)
{
    struct worker *worker = opaque;
    char byte;
    worker_begin(worker);
    for (;;) { atomic_store(&worker->line, __LINE__); if (read(never_written[0], &byte, 1) <= 0) pause_ms(1000); }
    return NULL;
}

__attribute__((noinline)) static void *spinner_body(void *opaque)
{
    worker_begin(opaque);
    for (;;)
        spins++;
    return NULL;
}

/* Blocks every signal, the request's too: it cannot answer, and is found
 * early from its status file. */
__attribute__((noinline)) static void *blocker_body(void *opaque)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    worker_begin(opaque);
    for (;;)
        pause();
    return NULL;
}

/* Waits in pause(): a signal handler returns into the loop. */
__attribute__((noinline)) static void *pauser_body(void *opaque)
{
    worker_begin(opaque);
    for (;;)
        pause();
    return NULL;
}

static void open_never_written(void)
{
    if (never_written[0] < 0)
        CHILD_CHECK(pipe(never_written) == 0, "pipe: %s", strerror(errno));
}

/* ---- the parent's side: reading the report ---- */

/* The value of "@KEY=" the child said; fails the test if it did not. */
static long said(const char *output, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof needle, "@%s=", key);
    const char *at = strstr(output, needle);
    cr_assert(at != NULL, "the child did not say %s:\n%s", key, output);
    return strtol(at + strlen(needle), NULL, 10);
}

/* The section of thread TID: its "*** thread TID " line up to the next
 * line that starts with "*** " (malloc'd), or NULL. */
static char *section_of(const char *report, pid_t tid)
{
    char needle[48];
    snprintf(needle, sizeof needle, "*** thread %d \"", (int)tid);
    const char *start = strstr(report, needle);
    if (start == NULL)
        return NULL;
    const char *end = strstr(start + 1, "\n*** ");
    size_t length = end != NULL ? (size_t)(end - start) + 1 : strlen(start);
    return strndup(start, length);
}

/* Its first line, without the newline (malloc'd). */
static char *first_line(const char *text)
{
    const char *end = strchr(text, '\n');
    return strndup(text, end != NULL ? (size_t)(end - text) : strlen(text));
}

/* The section of thread TID, failing the test if it is missing. */
static char *must_section(const char *report, pid_t tid)
{
    char *section = section_of(report, tid);
    cr_assert(section != NULL, "no \"*** thread %d\" in the report:\n%s", (int)tid, report);
    return section;
}

static int matches(const char *text, const char *pattern)
{
    regex_t regex;
    cr_assert_eq(regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0, "%s", pattern);
    int found = regexec(&regex, text, 0, NULL, 0) == 0;
    regfree(&regex);
    return found;
}

/* The tids of the "*** thread " lines, in the order written. */
static int listed_tids(const char *report, pid_t *tids, int capacity)
{
    int count = 0;
    for (const char *at = strstr(report, "*** thread "); at != NULL;
         at = strstr(at + 1, "*** thread ")) {
        if (count < capacity)
            tids[count] = (pid_t)strtol(at + 11, NULL, 10);
        count++;
    }
    return count;
}

/* The header of a read thread: "...(sleeping), N frames:" or ", 1 frame:":
 * no reason after the state. */
#define READ_HEADER "^\\*\\*\\* thread [0-9]+ \"[^\"]*\" [A-Za-z] \\([a-z ]+\\), [0-9]+ frames?:$"

/* A frame line naming FUNCTION that also carries this file's name and LINE
 * (0: any line). */
static void assert_frame_at(const char *section, const char *function, int line)
{
    char needle[96];
    snprintf(needle, sizeof needle, "(%s+", function);
    const char *at = strstr(section, needle);
    cr_assert(at != NULL, "no frame in %s:\n%s", function, section);
    while (at > section && at[-1] != '\n')
        at--;
    char *frame = first_line(at);
    if (line > 0)
        snprintf(needle, sizeof needle, "test_threads.c:%d", line);
    else
        snprintf(needle, sizeof needle, "test_threads.c:");
    const char *file = strstr(frame, needle);
    /* the line number whole: :12 is not :123 */
    int whole = file != NULL && (line == 0 || file[strlen(needle)] == '\0' ||
                                 file[strlen(needle)] == ' ');
    cr_assert(whole, "frame %s, want \"%s\"\n%s", frame, needle, section);
    free(frame);
}

/* Every "*** thread " line is whole and in the fixed words, and is
 * followed by exactly the frames it announces, numbered from #0. Returns
 * NULL, or what is wrong (malloc'd). */
static char *check_thread_lines(const char *report)
{
    static const char header[] =
        "^\\*\\*\\* thread [0-9]+ \"[^\"\n]*\" [RSDTtZXIP?] "
        "\\((running|sleeping|disk sleep|stopped|tracing stop|zombie|dead|idle|parked|unknown)\\)"
        "(: (blocks every signal|blocks the signal we ask with \\(61\\)|"
        "did not answer within [0-9]+ ms|exited|could not be stopped|"
        "also crashed: signal [0-9]+ \\([A-Z0-9]+\\)))?"
        "(; (in syscall [0-9]+|in user space) at pc 0x[0-9a-f]+, sp 0x[0-9a-f]+)?"
        "((, |; walked from them, )([0-9]+) frames?:)?$";
    regex_t regex;
    cr_assert_eq(regcomp(&regex, header, REG_EXTENDED), 0);
    char *problem = NULL;
    for (const char *at = strstr(report, "*** thread "); at != NULL && problem == NULL;
         at = strstr(at + 1, "*** thread ")) {
        char *line = first_line(at);
        regmatch_t match[8];
        if (regexec(&regex, line, 8, match, 0) != 0) {
            asprintf(&problem, "malformed: %s", line);
        } else {
            int frames = match[7].rm_so >= 0 ? atoi(line + match[7].rm_so) : 0;
            const char *next = strchr(at, '\n');
            for (int i = 0; i < frames && problem == NULL; i++) {
                char expected[16];
                snprintf(expected, sizeof expected, "#%d  ", i);
                /* skip lines that are not frames (an inlined call's) */
                while (next != NULL && next[1] == ' ')
                    next = strchr(next + 1, '\n');
                if (next == NULL || strncmp(next + 1, expected, strlen(expected)) != 0)
                    asprintf(&problem, "%s: frame %d missing", line, i);
                else
                    next = strchr(next + 1, '\n');
            }
        }
        free(line);
    }
    regfree(&regex);
    return problem;
}

static void assert_thread_lines_well_formed(const char *report)
{
    char *problem = check_thread_lines(report);
    cr_assert(problem == NULL, "%s\n%s", problem, report);
}

/* The thread the child said "@NAME=tid" of was read: no reason, and a
 * frame in NAME_body (the bodies are named so). */
static void assert_read_in(const char *out, const char *name)
{
    char *section = must_section(out, said(out, name));
    char *header = first_line(section);
    cr_assert(matches(header, READ_HEADER), "%s not read:\n%s", name, out);
    char function[32];
    snprintf(function, sizeof function, "%s_body", name);
    assert_frame_at(section, function, 0);
    free(header);
    free(section);
}

/* Everything from the first occurrence of MARKER on (or the whole text). */
static const char *after(const char *text, const char *marker)
{
    const char *at = strstr(text, marker);
    cr_assert(at != NULL, "no \"%s\" in:\n%s", marker, text);
    return at;
}

/* ---- 1. four threads in four states ---- */

static struct worker sleeper = { .name = "sleeper" }, reader = { .name = "reader" },
                     spinner = { .name = "spinner" }, blocker = { .name = "blocker" };

static void start_the_four(void)
{
    open_never_written();
    say("sleeper", start_worker(sleeper_body, &sleeper));
    say("reader", start_worker(reader_body, &reader));
    say("spinner", start_worker(spinner_body, &spinner));
    say("blocker", start_worker(blocker_body, &blocker));
    wait_for_state(sleeper.tid, "S");
    wait_for_state(reader.tid, "S");
    wait_for_state(blocker.tid, "S");
    say("sleeper_line", atomic_load(&sleeper.line));
    say("reader_line", atomic_load(&reader.line));
}

static void crash_with_four(void *options)
{
    install_or_exit(options);
    start_the_four();
    write_to_null();
}

Test(threads, four_threads_in_four_states, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_four, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(count_of(out, "*** execinfo_ex: fatal signal"), 1, "%s", out);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    assert_thread_lines_well_formed(out);

    /* After the crashing thread's own part: its trace comes first. */
    const char *others = after(out, "*** other threads (4), by tid:\n");
    const char *own = strstr(out, "(write_to_null+");
    cr_assert(own != NULL && own < others, "%s", out);

    /* All four, by tid, ascending. */
    pid_t tids[8];
    cr_assert_eq(listed_tids(out, tids, 8), 4, "%s", out);
    for (int i = 1; i < 4; i++)
        cr_assert_lt(tids[i - 1], tids[i], "not in tid order:\n%s", out);

    char *section = must_section(out, said(out, "sleeper"));
    char *header = first_line(section);
    cr_assert(matches(header, READ_HEADER) && strstr(header, "\"sleeper\" S (sleeping), "),
              "%s", section);
    assert_frame_at(section, "sleeper_body", said(out, "sleeper_line"));
    free(header);
    free(section);

    section = must_section(out, said(out, "reader"));
    header = first_line(section);
    cr_assert(matches(header, READ_HEADER) && strstr(header, "\"reader\" S (sleeping), "),
              "%s", section);
    assert_frame_at(section, "reader_body", said(out, "reader_line"));
    free(header);
    free(section);

    section = must_section(out, said(out, "spinner"));
    header = first_line(section);
    cr_assert(matches(header, READ_HEADER) && strstr(header, "\"spinner\" R (running), "),
              "%s", section);
    assert_frame_at(section, "spinner_body", 0);
    free(header);
    free(section);

    /* It cannot answer: the kernel's pc and sp, and the walk from them. */
    section = must_section(out, said(out, "blocker"));
    header = first_line(section);
    cr_assert(matches(header, "\"blocker\" S \\(sleeping\\): blocks every signal; in syscall [0-9]+ "
                              "at pc 0x[0-9a-f]+, sp 0x[0-9a-f]+; walked from them, [0-9]+ frames:$"),
              "%s", section);
    assert_frame_at(section, "blocker_body", 0);
    free(header);
    free(section);
}

Test(threads, four_threads_in_json, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_four, "format=json", &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    /* "tid" is also a member of the report itself: count inside "threads". */
    const char *threads = after(out, "\"threads\":[");
    cr_assert_eq(count_of(threads, "\"tid\":"), 5, "%s", out);
    cr_assert(strncmp(threads, "\"threads\":[{\"tid\":", 18) == 0, "%s", threads);
    const char *first_end = strstr(threads, "\"frames\":");
    const char *crashing = strstr(threads, "\"crashing\":true");
    cr_assert(crashing != NULL && crashing < first_end, "the first is not the crashing one:\n%s", out);
    cr_assert_eq(count_of(threads, "\"crashing\":true"), 1, "%s", out);
    cr_assert_eq(count_of(threads, "\"reporting\":true"), 1, "%s", out);
    cr_assert_eq(count_of(threads, "\"crashing\":false"), 4, "%s", out);
    cr_assert(strstr(threads, "\"name\":\"sleeper\",\"state\":\"S\""), "%s", out);
    cr_assert(strstr(threads, "\"name\":\"reader\",\"state\":\"S\""), "%s", out);
    cr_assert(strstr(threads, "\"name\":\"spinner\",\"state\":\"R\""), "%s", out);
    cr_assert(strstr(threads, "\"name\":\"blocker\",\"state\":\"S\""), "%s", out);
    cr_assert(strstr(threads, "\"reason\":\"blocks every signal\""), "%s", out);
    cr_assert(strstr(threads, "\"function\":\"sleeper_body\""), "%s", out);
    cr_assert(strstr(threads, "\"function\":\"blocker_body\""), "%s", out);
    cr_assert_eq(count_of(out, "\"reason\":null"), 4, "%s", out);
    cr_assert(strstr(out, "\"threads_seen\":5"), "%s", out);
    cr_assert(strstr(out, "\"threads_left_out\":0"), "%s", out);
}

/* ---- the name and state a thread says of itself are its stat file's ---- */

/* Each way of sleeping in a call ends differently when the request comes:
 * read() is restarted (SA_RESTART), sleep() through restart_syscall,
 * pause() with EINTR, a futex wait within pthread_cond_wait; the spinner
 * is in no call at all. */
static struct worker pauser = { .name = "pauser" }, waiter = { .name = "waiter" };
static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static void *waiter_body(void *opaque)
{
    worker_begin(opaque);
    pthread_mutex_lock(&never_lock);
    for (;;)
        pthread_cond_wait(&never_signalled, &never_lock);
    return NULL;
}

static struct worker *const each_wait[] = { &sleeper, &reader, &spinner, &pauser, &waiter };

static void crash_with_each_wait(void *options)
{
    install_or_exit(options);
    start_the_four();
    say("pauser", start_worker(pauser_body, &pauser));
    say("waiter", start_worker(waiter_body, &waiter));
    wait_for_state(pauser.tid, "S");
    wait_for_state(waiter.tid, "S");
    for (size_t i = 0; i < sizeof each_wait / sizeof each_wait[0]; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_state", each_wait[i]->name);
        say(key, task_state(atomic_load(&each_wait[i]->tid)));
    }
    write_to_null();
}

Test(threads, each_thread_named_and_in_the_state_its_stat_file_shows, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_each_wait, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    for (size_t i = 0; i < sizeof each_wait / sizeof each_wait[0]; i++) {
        const char *name = each_wait[i]->name;
        char key[32], expected[64];
        snprintf(key, sizeof key, "%s_state", name);
        char state = (char)said(out, key);
        cr_assert(state == 'S' || state == 'R', "%s was '%c' in its stat file:\n%s", name, state, out);
        snprintf(expected, sizeof expected, "\"%s\" %c (%s), ", name, state,
                 state == 'S' ? "sleeping" : "running");
        char *section = must_section(out, said(out, name));
        char *header = first_line(section);
        cr_assert(matches(header, READ_HEADER) && strstr(header, expected) != NULL,
                  "want %s in the header:\n%s", expected, section);
        free(header);
        free(section);
    }
}

/* ---- 2. threads=1, and the cap ---- */

static void crash_with_six(void *options)
{
    static struct worker six[6];
    static const char *const names[6] = { "six-0", "six-1", "six-2", "six-3", "six-4", "six-5" };
    char key[16];
    install_or_exit(options);
    for (int i = 0; i < 6; i++) {
        six[i].name = names[i];
        snprintf(key, sizeof key, "tid%d", i);
        say(key, start_worker(pauser_body, &six[i]));
    }
    for (int i = 0; i < 6; i++)
        wait_for_state(six[i].tid, "S");
    write_to_null();
}

Test(threads, one_thread_is_the_report_of_old, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_six, "threads=1", &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(out, "(write_to_null+") && strstr(out, "*** end of report"), "%s", out);
    cr_assert(!strstr(out, "*** thread "), "%s", out);
    cr_assert(!strstr(out, "other threads"), "%s", out);
    cr_assert(!strstr(out, "left out"), "%s", out);
}

Test(threads, the_cap_lists_the_smallest_tids_and_counts_the_rest, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_six, "threads=3", &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    pid_t listed[8], all[6];
    cr_assert_eq(listed_tids(out, listed, 8), 2, "%s", out);
    cr_assert(strstr(out, "*** 4 more threads left out (threads=3)\n"), "%s", out);
    /* The two smallest tids of the six (the crashing thread is the process's first). */
    char key[16];
    for (int i = 0; i < 6; i++) {
        snprintf(key, sizeof key, "tid%d", i);
        all[i] = (pid_t)said(out, key);
    }
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            if (all[j] < all[i]) {
                pid_t swap = all[i];
                all[i] = all[j];
                all[j] = swap;
            }
    cr_assert(listed[0] == all[0] && listed[1] == all[1], "listed %d %d, smallest %d %d\n%s",
              listed[0], listed[1], all[0], all[1], out);
    assert_thread_lines_well_formed(out);
}

/* ---- 3. a thread in uninterruptible sleep: a vfork parent ---- */

static int vfork_hold[2]; /* the vfork child waits here until the process has died */
static struct worker vforker = { .name = "vforker" };

/* While its vfork child lives, this thread sleeps in the kernel in state
 * D and cannot run a handler. The child waits until every write end of
 * the pipe is closed: its own it closes, the process's go when the
 * process dies, so the thread stays in D until the crash has ended (not
 * for a guessed time); poll's bound ends it if that never comes. */
__attribute__((noinline)) static void *vforker_body(void *opaque)
{
    worker_begin(opaque);
    pid_t child = vfork();
    if (child == 0) {
        close(vfork_hold[1]);
        struct pollfd hold = { .fd = vfork_hold[0], .events = POLLIN };
        poll(&hold, 1, 20000);
        _exit(0);
    }
    return NULL;
}

static void crash_with_vfork_parent(void *options)
{
    install_or_exit(options);
    CHILD_CHECK(pipe(vfork_hold) == 0, "pipe");
    say("vforker", start_worker(vforker_body, &vforker));
    wait_for_state(vforker.tid, "D");
    write_to_null();
}

Test(threads, uninterruptible_sleep_costs_the_deadline, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_vfork_parent, "threads_timeout_ms=300", &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    char *section = must_section(out, said(out, "vforker"));
    cr_assert(strstr(section, "\"vforker\" D (disk sleep): did not answer within 300 ms"), "%s", out);
    free(section);
    assert_thread_lines_well_formed(out);
}

/* ---- 4. a thread stopped by a tracer ---- */

/* A helper process that ptrace-stops threads of the process that made
 * it, on command: 'S' seizes thread A and PTRACE_INTERRUPTs it, waits for
 * the stop and answers "k" (or "E" and the errno); 'R' lets A go after
 * 50 ms, waits until A has taken every request signal it had pending
 * (so that A's queued requests have all been handled), then lets B go.
 * When the command pipe closes (its maker died) it exits, which ends any
 * trace still on. Its maker must allow it as a tracer (PR_SET_PTRACER:
 * YAMA may be on). */
struct tracer {
    pid_t pid;
    int answer;   /* read end */
    int command;  /* write end */
};

struct tracer_command {
    char op;
    pid_t a, b;
};

/* The mask of TID's status line KEY ("SigPnd", "SigBlk"), per /proc. */
static uint64_t status_mask_of(pid_t tid, const char *key)
{
    char path[64], text[4096], needle[16];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    snprintf(needle, sizeof needle, "\n%s:", key);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    text[length > 0 ? length : 0] = '\0';
    const char *line = strstr(text, needle);
    return line != NULL ? strtoull(line + strlen(needle), NULL, 16) : 0;
}

static int request_pending_at(pid_t tid)
{
    return (status_mask_of(tid, "SigPnd") >> (REQUEST_SIGNAL - 1)) & 1;
}

static void tracer_loop(int answer, int command)
{
    struct tracer_command order;
    while (read(command, &order, sizeof order) == sizeof order) {
        if (order.op == 'S') {
            int status;
            if (ptrace(PTRACE_SEIZE, order.a, 0, 0) != 0 ||
                ptrace(PTRACE_INTERRUPT, order.a, 0, 0) != 0 ||
                waitpid(order.a, &status, __WALL) != order.a || !WIFSTOPPED(status)) {
                char reply[2] = { 'E', (char)errno };
                write(answer, reply, 2);
                _exit(1);
            }
            write(answer, "k ", 2);
        } else if (order.op == 'R') {
            pause_ms(50);
            ptrace(PTRACE_DETACH, order.a, 0, 0);
            for (int i = 0; i < 10000 && request_pending_at(order.a); i++)
                pause_ms(1);
            ptrace(PTRACE_DETACH, order.b, 0, 0);
        }
    }
    _exit(0);
}

static struct tracer start_tracer(void)
{
    int answer[2], command[2];
    CHILD_CHECK(pipe(answer) == 0 && pipe(command) == 0, "pipe");
    pid_t pid = fork();
    CHILD_CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(answer[0]);
        close(command[1]);
        tracer_loop(answer[1], command[0]);
    }
    close(answer[1]);
    close(command[0]);
    return (struct tracer){ pid, answer[0], command[1] };
}

/* Have thread TID ptrace-stopped, and wait until it is. */
static void tracer_stop(const struct tracer *tracer, pid_t tid)
{
    struct tracer_command order = { 'S', tid, 0 };
    char reply[2] = { 0, 0 };
    CHILD_CHECK(write(tracer->command, &order, sizeof order) == sizeof order, "tracer");
    CHILD_CHECK(read(tracer->answer, reply, 2) == 2 && reply[0] == 'k',
                "PTRACE NOT PERMITTED: the tracer could not stop thread %d: %s", (int)tid,
                reply[0] == 'E' ? strerror(reply[1]) : "no answer");
    wait_for_state(tid, "t");
}

static struct worker traced = { .name = "traced" };

static void crash_with_traced_thread(void *options)
{
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    install_or_exit(options);
    say("traced", start_worker(pauser_body, &traced));
    wait_for_state(traced.tid, "S");
    struct tracer tracer = start_tracer();
    tracer_stop(&tracer, traced.tid);
    write_to_null();
}

Test(threads, a_thread_stopped_by_a_tracer_costs_the_deadline, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_traced_thread, "threads_timeout_ms=300", &result);
    const char *out = result.output;
    cr_assert(!strstr(out, "PTRACE NOT PERMITTED"),
              "ptrace is not permitted on this machine (this test needs it):\n%s", out);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    char *section = must_section(out, said(out, "traced"));
    cr_assert(strstr(section, "\"traced\" t (tracing stop): did not answer within 300 ms"), "%s", out);
    free(section);
    assert_thread_lines_well_formed(out);
}

/* ---- 5. threads that exit while the report is gathered ---- */

/* (a) The main thread gone by pthread_exit is a zombie that stays
 * listed; the crash comes from another thread once it is. */
static struct worker zombie_crasher = { .name = "crasher" };

__attribute__((noinline)) static void *crash_once_main_is_a_zombie(void *opaque)
{
    worker_begin(opaque);
    wait_for_state(getpid(), "Z");
    write_to_null();
    return NULL;
}

static void crash_after_main_exits(void *options)
{
    install_or_exit(options);
    prctl(PR_SET_NAME, "leader");
    say("leader", gettid());
    start_worker(crash_once_main_is_a_zombie, &zombie_crasher);
    pthread_exit(NULL);
}

Test(threads, a_main_thread_gone_by_pthread_exit_is_exited, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_after_main_exits, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    char *section = must_section(out, said(out, "leader"));
    char *header = first_line(section);
    cr_assert(matches(header, "\"leader\" Z \\(zombie\\): exited$"), "%s", out);
    free(header);
    free(section);
    assert_thread_lines_well_formed(out);
}

/* (b) Churn: two creators start and join short-lived threads without
 * end; a third thread crashes once many have come and gone, so that
 * threads exit between the listing, the request and the answer. */
static atomic_int churned;

static void *short_lived(void *unused)
{
    atomic_fetch_add(&churned, 1);
    return unused;
}

static void *creator_body(void *opaque)
{
    worker_begin(opaque);
    for (;;) {
        pthread_t batch[4];
        int started = 0;
        for (int i = 0; i < 4; i++)
            started += pthread_create(&batch[started], NULL, short_lived, NULL) == 0;
        for (int i = 0; i < started; i++)
            pthread_join(batch[i], NULL);
    }
    return NULL;
}

__attribute__((noinline)) static void *churn_crasher_body(void *opaque)
{
    worker_begin(opaque);
    while (atomic_load(&churned) < 400)
        pause_ms(1);
    write_to_null();
    return NULL;
}

static void crash_during_churn(void *options)
{
    static struct worker creators[2] = { { .name = "creator-a" }, { .name = "creator-b" } };
    static struct worker crasher = { .name = "crasher" };
    install_or_exit(options);
    start_worker(creator_body, &creators[0]);
    start_worker(creator_body, &creators[1]);
    start_worker(churn_crasher_body, &crasher);
    for (;;)
        pause();
}

Test(threads, threads_exiting_during_the_gathering, .timeout = 60)
{
    static struct child_result result;
    for (int round = 0; round < 5; round++) {
        run_child(crash_during_churn, NULL, &result);
        const char *out = result.output;
        assert_died_by(&result, SIGSEGV);
        cr_assert_eq(count_of(out, "*** execinfo_ex: fatal signal"), 1, "%s", out);
        cr_assert(strstr(out, "(churn_crasher_body+"), "%s", out);
        cr_assert(strstr(out, "*** end of report"), "round %d:\n%s", round, out);
        /* the creators at least; how many others, churn decides */
        cr_assert_geq(count_of(out, "*** thread "), 3, "%s", out);
        assert_thread_lines_well_formed(out);
    }
}

/* ---- 6. a late answer never writes into a reused slot ---- */

/* Three threads, by tid t0 < t1 < t2 (sorted once they run: tids wrap,
 * creation order says nothing). Round 1 lists [t0, t1, t2]; t1 "traced"
 * is ptrace-stopped, its request stays pending, and the round ends
 * without it. Then t0 exits: round 2 lists [t1, t2], so t2 "second" takes
 * slot 1, the slot that traced's late answer to round 1 names. second is
 * ptrace-stopped too, so that its slot still waits for its own answer
 * when the late one comes. Just after round 2 has begun the tracer lets
 * traced go: its round-1 request is delivered first (one signal, queued
 * in order), while round 2 is open, and must be refused; then it answers
 * round 2, and only then is second let go, to answer in slot 1. */
struct pooled {
    struct worker worker;
    int role_pipe[2];
    atomic_int role;
};

static volatile int second_wakeups;

__attribute__((noinline)) static void *traced_wait(void)
{
    for (;;)
        pause();
    return NULL;
}

__attribute__((noinline)) static void *second_wait(void)
{
    for (;;) { /* not the same code as traced_wait: never folded into one */
        pause();
        second_wakeups++;
    }
    return NULL;
}

/* Waits for its role: 'x' exit, 't' traced, 's' second (each in a
 * function of its own, which its frames must show). */
__attribute__((noinline)) static void *pooled_body(void *opaque)
{
    struct pooled *pooled = opaque;
    char role = 0;
    worker_begin(&pooled->worker);
    while (read(pooled->role_pipe[0], &role, 1) < 0 && errno == EINTR) {
    }
    if (role == 'x')
        return NULL;
    prctl(PR_SET_NAME, role == 't' ? "traced" : "second");
    atomic_store(&pooled->role, role);
    return role == 't' ? traced_wait() : second_wait();
}

/* Give POOLED its ROLE, and wait until it blocks in its role's function. */
static void take_role(struct pooled *pooled, char role)
{
    CHILD_CHECK(write(pooled->role_pipe[1], &role, 1) == 1, "role");
    for (int i = 0; i < 10000 && atomic_load(&pooled->role) != role; i++)
        pause_ms(1);
    CHILD_CHECK(atomic_load(&pooled->role) == role, "role %c not taken", role);
    wait_for_state(pooled->worker.tid, "S");
}

static void dump_twice_around_a_late_answer(void *unused)
{
    static struct pooled pool[3];
    (void)unused;
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    install_or_exit("threads_timeout_ms=200");
    for (int i = 0; i < 3; i++) {
        pool[i].worker.name = "pool";
        CHILD_CHECK(pipe(pool[i].role_pipe) == 0, "pipe");
        start_worker(pooled_body, &pool[i].worker);
    }
    /* Sorted by pointer: each thread keeps the address it was given. */
    struct pooled *by_tid[3] = { &pool[0], &pool[1], &pool[2] };
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (by_tid[j]->worker.tid < by_tid[i]->worker.tid) {
                struct pooled *swap = by_tid[i];
                by_tid[i] = by_tid[j];
                by_tid[j] = swap;
            }
    struct pooled *first = by_tid[0], *traced_one = by_tid[1], *second = by_tid[2];
    wait_for_state(first->worker.tid, "S");
    take_role(traced_one, 't');
    take_role(second, 's');
    say("first", first->worker.tid);
    say("traced", traced_one->worker.tid);
    say("second", second->worker.tid);
    struct tracer tracer = start_tracer();
    tracer_stop(&tracer, traced_one->worker.tid);

    dprintf(2, "=== dump 1\n");
    say("dump1", backtrace_dump_threads(2, 0));

    CHILD_CHECK(write(first->role_pipe[1], "x", 1) == 1, "exit");
    pthread_join(first->worker.thread, NULL);
    wait_until_gone(first->worker.tid);
    /* Released, second leaves our handler, where the request signal is
     * blocked: stopped before it is out, it would seem to block it. */
    for (int i = 0; i < 10000 && (status_mask_of(second->worker.tid, "SigBlk") >>
                                  (REQUEST_SIGNAL - 1)) & 1; i++)
        pause_ms(1);
    wait_for_state(second->worker.tid, "S");
    tracer_stop(&tracer, second->worker.tid);
    /* Round 2 stays open until both answer (or 10 s): the tracer's
     * steps then cannot outlast it, however slow the machine. */
    install_or_exit("threads_timeout_ms=10000");
    struct tracer_command release = { 'R', traced_one->worker.tid, second->worker.tid };
    CHILD_CHECK(write(tracer.command, &release, sizeof release) == sizeof release, "tracer");
    dprintf(2, "=== dump 2\n");
    say("dump2", backtrace_dump_threads(2, 0));
    /* traced took both its requests before it answered round 2: alive
     * here means the late one did not kill us. */
    CHILD_CHECK(task_state(traced_one->worker.tid) != 0, "traced is gone");
    dprintf(2, "=== alive\n");
    close(tracer.command);
    waitpid(tracer.pid, NULL, 0);
}

Test(threads, a_late_answer_never_writes_into_a_reused_slot, .timeout = 30)
{
    static struct child_result result;
    run_child(dump_twice_around_a_late_answer, NULL, &result);
    const char *out = result.output;
    cr_assert(!strstr(out, "PTRACE NOT PERMITTED"),
              "ptrace is not permitted on this machine (this test needs it):\n%s", out);
    assert_exited_with(&result, 0);
    pid_t first = said(out, "first"), traced_tid = said(out, "traced");
    pid_t second = said(out, "second");
    cr_assert_eq(said(out, "dump1"), 4, "%s", out);
    cr_assert_eq(said(out, "dump2"), 3, "%s", out);

    const char *dump1_start = after(out, "=== dump 1\n"), *dump2 = after(out, "=== dump 2\n");
    char *dump1 = strndup(dump1_start, (size_t)(dump2 - dump1_start));
    cr_assert(strstr(dump2, "=== alive\n"), "%s", out);

    /* Round 1: traced did not answer; the others did. */
    pid_t listed[8];
    cr_assert_eq(listed_tids(dump1, listed, 8), 3, "%s", out);
    char *section = must_section(dump1, traced_tid);
    cr_assert(strstr(section, "\"traced\" t (tracing stop): did not answer within 200 ms"), "%s", out);
    free(section);
    section = must_section(dump1, first);
    cr_assert(matches(section, READ_HEADER), "%s", out);
    free(section);
    section = must_section(dump1, second);
    cr_assert(matches(section, READ_HEADER), "%s", out);
    assert_frame_at(section, "second_wait", 0);
    free(section);
    assert_thread_lines_well_formed(dump1);
    free(dump1);

    /* Round 2: each thread once, each read, each with its own frames. */
    cr_assert_eq(listed_tids(dump2, listed, 8), 2, "%s", out);
    cr_assert(listed[0] == traced_tid && listed[1] == second, "%s", out);
    section = must_section(dump2, traced_tid);
    char *header = first_line(section);
    cr_assert(matches(header, READ_HEADER), "traced was not read in round 2:\n%s", out);
    assert_frame_at(section, "traced_wait", 0);
    free(header);
    free(section);
    section = must_section(dump2, second);
    header = first_line(section);
    cr_assert(matches(header, READ_HEADER) && strstr(header, "\"second\" "), "%s", out);
    assert_frame_at(section, "second_wait", 0);
    cr_assert(!strstr(section, "(traced_wait+"), "traced's late answer in second's slot:\n%s", out);
    free(header);
    free(section);
    assert_thread_lines_well_formed(dump2);
}

/* ---- 7. two threads crashing at once ---- */

static pthread_barrier_t crash_barrier;

__attribute__((noinline)) static void *crash_one(void *opaque)
{
    worker_begin(opaque);
    pthread_barrier_wait(&crash_barrier);
    *(volatile int *)16 = 1;
    return NULL;
}

__attribute__((noinline)) static void *crash_two(void *opaque)
{
    worker_begin(opaque);
    pthread_barrier_wait(&crash_barrier);
    *(volatile int *)24 = 2;
    return NULL;
}

static void crash_two_at_once(void *options)
{
    static struct worker one = { .name = "crasher-1" }, two = { .name = "crasher-2" };
    install_or_exit(options);
    /* Three: the crashers go only once their tids are said. */
    pthread_barrier_init(&crash_barrier, NULL, 3);
    say("one", start_worker(crash_one, &one));
    say("two", start_worker(crash_two, &two));
    pthread_barrier_wait(&crash_barrier);
    for (;;)
        pause();
}

Test(threads, two_threads_crashing_at_once_give_one_report, .timeout = 60)
{
    static struct child_result result;
    for (int round = 0; round < 10; round++) {
        run_child(crash_two_at_once, NULL, &result);
        const char *out = result.output;
        assert_died_by(&result, SIGSEGV);
        cr_assert_eq(count_of(out, "*** execinfo_ex: fatal signal"), 1, "round %d:\n%s", round, out);
        cr_assert(strstr(out, "*** end of report"), "%s", out);
        assert_thread_lines_well_formed(out);
        /* One is the reporter (its frames before the other threads'),
         * the other is listed with its own crash or in its function. */
        const char *others = after(out, "*** other threads (");
        char *own = strndup(out, (size_t)(others - out));
        int one_reports = strstr(own, "(crash_one+") != NULL;
        int two_reports = strstr(own, "(crash_two+") != NULL;
        free(own);
        cr_assert(one_reports != two_reports, "round %d: reporter's frames:\n%s", round, out);
        const char *other_function = one_reports ? "(crash_two+" : "(crash_one+";
        char *section = must_section(out, said(out, one_reports ? "two" : "one"));
        char *header = first_line(section);
        cr_assert(strstr(section, other_function), "round %d:\n%s", round, out);
        cr_assert(matches(header, READ_HEADER) ||
                      strstr(header, ": also crashed: signal 11 (SIGSEGV), "),
                  "round %d:\n%s", round, out);
        free(header);
        free(section);
    }
}

/* ---- 8. the program's own use of signal 61 ---- */

static atomic_int program_calls;
static atomic_int program_last_code;

static void program_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)ucontext;
    if (signo == REQUEST_SIGNAL && info != NULL)
        atomic_store(&program_last_code, info->si_code);
    atomic_fetch_add(&program_calls, 1);
}

static void raise_request_signal_here(void)
{
    tgkill(getpid(), gettid(), REQUEST_SIGNAL);
}

static void *raiser_body(void *opaque)
{
    worker_begin(opaque);
    raise_request_signal_here();
    return NULL;
}

static int masker_go[2], masker_done[2];

/* Blocks signal 61 alone: our request stays pending at it. On a byte it
 * unblocks it (the pending request is then delivered) and says so. */
__attribute__((noinline)) static void *masker_body(void *opaque)
{
    sigset_t just_ours;
    sigemptyset(&just_ours);
    sigaddset(&just_ours, REQUEST_SIGNAL);
    pthread_sigmask(SIG_BLOCK, &just_ours, NULL);
    worker_begin(opaque);
    char byte;
    while (read(masker_go[0], &byte, 1) < 0 && errno == EINTR) {
    }
    pthread_sigmask(SIG_UNBLOCK, &just_ours, NULL);
    write(masker_done[1], "u", 1);
    for (;;)
        pause();
    return NULL;
}

static int is_program_handler(void)
{
    struct sigaction now;
    sigaction(REQUEST_SIGNAL, NULL, &now);
    return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == program_handler;
}

static void program_with_signal_61(void *unused)
{
    static struct worker a_sleeper = { .name = "sleeper" }, masker = { .name = "masker" },
                         raiser = { .name = "raiser" };
    (void)unused;
    struct sigaction own;
    memset(&own, 0, sizeof own);
    own.sa_sigaction = program_handler;
    own.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&own.sa_mask);
    CHILD_CHECK(sigaction(REQUEST_SIGNAL, &own, NULL) == 0, "sigaction");
    install_or_exit(NULL);
    start_worker(sleeper_body, &a_sleeper);
    wait_for_state(a_sleeper.tid, "S");

    raise_request_signal_here();
    CHILD_CHECK(atomic_load(&program_calls) == 1, "before the dump: %d calls", program_calls);
    dprintf(2, "=== dump 1\n");
    CHILD_CHECK(backtrace_dump_threads(2, 0) == 2, "dump 1");
    /* Our requests went to our handler, not the program's. */
    CHILD_CHECK(atomic_load(&program_calls) == 1, "after the dump: %d calls", program_calls);
    CHILD_CHECK(is_program_handler(), "the program's handler is not back after the dump");
    raise_request_signal_here();
    CHILD_CHECK(atomic_load(&program_calls) == 2, "after the dump and a raise: %d calls",
                program_calls);

    /* A thread that blocks 61 keeps our request pending, so our handler
     * stays installed; the program's own 61 is passed on through it. */
    CHILD_CHECK(pipe(masker_go) == 0 && pipe(masker_done) == 0, "pipe");
    say("masker", start_worker(masker_body, &masker));
    wait_for_state(masker.tid, "S");
    dprintf(2, "=== dump 2\n");
    CHILD_CHECK(backtrace_dump_threads(2, 0) == 3, "dump 2");
    dprintf(2, "=== after\n");
    CHILD_CHECK(!is_program_handler(), "our handler was taken away with a request pending");
    start_worker(raiser_body, &raiser);
    pthread_join(raiser.thread, NULL);
    CHILD_CHECK(atomic_load(&program_calls) == 3, "a raise from another thread: %d calls",
                program_calls);
    CHILD_CHECK(atomic_load(&program_last_code) == SI_TKILL, "si_code %d passed on",
                program_last_code);

    /* The stale request, delivered at last, is ours: refused, not passed on. */
    char byte;
    CHILD_CHECK(write(masker_go[1], "g", 1) == 1, "masker");
    CHILD_CHECK(read(masker_done[0], &byte, 1) == 1, "masker");
    CHILD_CHECK(atomic_load(&program_calls) == 3, "the stale request reached the program: %d calls",
                program_calls);
    dprintf(2, "=== done\n");
}

Test(threads, a_program_using_signal_61_keeps_it, .timeout = 30)
{
    static struct child_result result;
    run_child(program_with_signal_61, NULL, &result);
    const char *out = result.output;
    assert_exited_with(&result, 0);
    cr_assert(strstr(out, "=== done\n"), "%s", out);
    const char *dump2 = after(out, "=== dump 2\n");
    char *section = must_section(dump2, said(out, "masker"));
    cr_assert(strstr(section, "\"masker\" S (sleeping): blocks the signal we ask with (61)"),
              "%s", out);
    free(section);
    assert_thread_lines_well_formed(out);
}

/* ---- 9. a thread from before the handler: no alternate stack ---- */

static struct worker early = { .name = "early" };
static atomic_int early_altstack = -1;

__attribute__((noinline)) static void *early_body(void *opaque)
{
    stack_t stack;
    sigaltstack(NULL, &stack);
    atomic_store(&early_altstack, (stack.ss_flags & SS_DISABLE) ? 0 : 1);
    worker_begin(opaque);
    for (;;) { atomic_store(&early.line, __LINE__); pause(); }
    return NULL;
}

static void crash_with_an_early_thread(void *unused)
{
    (void)unused;
    say("early", start_worker(early_body, &early));
    install_or_exit(NULL);
    wait_for_state(early.tid, "S");
    say("early_altstack", atomic_load(&early_altstack));
    say("early_line", atomic_load(&early.line));
    write_to_null();
}

Test(threads, a_thread_without_an_alternate_stack_is_read, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_with_an_early_thread, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(said(out, "early_altstack"), 0, "the early thread had an alternate stack:\n%s", out);
    char *section = must_section(out, said(out, "early"));
    char *header = first_line(section);
    cr_assert(matches(header, READ_HEADER) && strstr(header, "\"early\" S (sleeping), "), "%s", out);
    assert_frame_at(section, "early_body", said(out, "early_line"));
    free(header);
    free(section);
}

/* ---- 10. ptrace denied ---- */

/* (a) A seccomp filter that fails every ptrace with EPERM: the gathering
 * does not need it. */
static void deny_ptrace(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs: %s", strerror(errno));
    CHILD_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0, "seccomp: %s",
                strerror(errno));
    /* Not traced, the parent: ESRCH without the filter, EPERM with it. */
    errno = 0;
    long peeked = syscall(__NR_ptrace, PTRACE_PEEKDATA, getppid(), 0, 0);
    say("ptrace_errno", peeked == -1 ? errno : 0);
}

static void crash_with_three(void)
{
    open_never_written();
    say("sleeper", start_worker(sleeper_body, &sleeper));
    say("reader", start_worker(reader_body, &reader));
    say("spinner", start_worker(spinner_body, &spinner));
    wait_for_state(sleeper.tid, "S");
    wait_for_state(reader.tid, "S");
    write_to_null();
}

static void crash_without_ptrace(void *unused)
{
    (void)unused;
    deny_ptrace();
    install_or_exit(NULL);
    crash_with_three();
}

static void assert_three_read(const char *out)
{
    pid_t tids[8];
    cr_assert_eq(listed_tids(out, tids, 8), 3, "%s", out);
    static const char *const names[] = { "sleeper", "reader", "spinner" };
    for (int i = 0; i < 3; i++)
        assert_read_in(out, names[i]);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
}

Test(threads, every_thread_read_with_ptrace_denied_by_seccomp, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_without_ptrace, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    cr_assert_eq(said(out, "ptrace_errno"), EPERM, "the filter does not deny ptrace:\n%s", out);
    assert_three_read(out);
}

/* (b) The crashing process is traced already (by the test): its stops
 * are passed on, signal and all, a bounded number of times. */
Test(threads, every_thread_read_in_a_process_traced_already, .timeout = 30)
{
    static char output[1 << 16];
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    fcntl(pipe_fds[1], F_SETPIPE_SZ, 1 << 20); /* the whole report, unread until the end */
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(pipe_fds[0]);
        dup2(pipe_fds[1], 2);
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
            _exit(98);
        raise(SIGSTOP);
        install_or_exit(NULL);
        crash_with_three();
        _exit(0);
    }
    close(pipe_fds[1]);
    int status = 0, stops = 0;
    for (; stops < 200; stops++) {
        cr_assert_eq(waitpid(child, &status, 0), child);
        if (!WIFSTOPPED(status))
            break;
        int signo = WSTOPSIG(status);
        ptrace(PTRACE_CONT, child, 0, signo == SIGSTOP ? 0 : signo);
    }
    read_all(pipe_fds[0], output, sizeof output);
    close(pipe_fds[0]);
    cr_assert_lt(stops, 200, "still stopping:\n%s", output);
    cr_assert(stops >= 3, "only %d stops: was it traced?\n%s", stops, output); /* SIGSTOP, SIGSEGV twice */
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status 0x%x\n%s", status, output);
    assert_three_read(output);
}

/* ---- 11. a vfork child that crashes before exec ---- */

__attribute__((noinline)) static void crash_in_vfork_child(void)
{
    *(volatile int *)16 = 1;
}

static void crash_in_vfork_child_then_parent(void *unused)
{
    static struct worker a = { .name = "sleeper-a" }, b = { .name = "sleeper-b" };
    (void)unused;
    install_or_exit(NULL);
    say("a", start_worker(pauser_body, &a));
    say("b", start_worker(pauser_body, &b));
    wait_for_state(a.tid, "S");
    wait_for_state(b.tid, "S");
    pid_t child = vfork();
    if (child == 0) {
        crash_in_vfork_child();
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    dprintf(2, "=== vfork child: signaled %d, signal %d\n", WIFSIGNALED(status),
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    write_to_null();
}

Test(threads, a_vfork_child_reports_itself_and_the_parent_still_reports_all, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_in_vfork_child_then_parent, NULL, &result);
    const char *out = result.output;
    assert_died_by(&result, SIGSEGV);
    const char *parent = after(out, "=== vfork child: ");
    char *child = strndup(out, (size_t)(parent - out));
    cr_assert(strncmp(parent, "=== vfork child: signaled 1, signal 11\n", 39) == 0, "%s", out);
    /* The child's report: itself only. */
    cr_assert_eq(count_of(child, "*** execinfo_ex: fatal signal"), 1, "%s", out);
    cr_assert(strstr(child, "(crash_in_vfork_child+"), "%s", out);
    cr_assert(strstr(child, "*** end of report"), "%s", out);
    cr_assert(!strstr(child, "*** thread "), "%s", out);
    free(child);
    /* The parent's, later: whole, with its threads. */
    cr_assert_eq(count_of(parent, "*** execinfo_ex: fatal signal"), 1, "%s", out);
    cr_assert(strstr(parent, "(write_to_null+"), "%s", out);
    cr_assert(strstr(parent, "*** end of report"), "%s", out);
    pid_t tids[8];
    cr_assert_eq(listed_tids(parent, tids, 8), 2, "%s", out);
    for (int i = 0; i < 2; i++) {
        char *section = must_section(parent, said(out, i == 0 ? "a" : "b"));
        char *header = first_line(section);
        cr_assert(matches(header, READ_HEADER), "%s", out);
        assert_frame_at(section, "pauser_body", 0);
        free(header);
        free(section);
    }
}

/* ---- 12. a thousand threads ---- */

#define THOUSAND 1000
static pthread_mutex_t crowd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t crowd_waits = PTHREAD_COND_INITIALIZER, crowd_ready = PTHREAD_COND_INITIALIZER;
static int crowd_count;

__attribute__((noinline)) static void *crowd_body(void *unused)
{
    pthread_mutex_lock(&crowd_lock);
    crowd_count++;
    pthread_cond_signal(&crowd_ready);
    for (;;)
        pthread_cond_wait(&crowd_waits, &crowd_lock); /* never signalled */
    return unused;
}

static void crash_with_a_thousand(void *options)
{
    install_or_exit(options);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < THOUSAND; i++) {
        pthread_t thread;
        int error = pthread_create(&thread, &attributes, crowd_body, NULL);
        CHILD_CHECK(error == 0, "thread %d: %s", i, strerror(error));
    }
    /* Each counts itself under the lock and releases it only by waiting:
     * at 1000, all are in (or entering) their wait. */
    pthread_mutex_lock(&crowd_lock);
    while (crowd_count < THOUSAND)
        pthread_cond_wait(&crowd_ready, &crowd_lock);
    pthread_mutex_unlock(&crowd_lock);
    write_to_null();
}

/* The one file in DIRECTORY, read whole (malloc'd), or NULL. */
static char *read_only_file(const char *directory, size_t *length)
{
    DIR *dir = opendir(directory);
    cr_assert_not_null(dir);
    char *text = NULL, path[512];
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        int fd = open(path, O_RDONLY);
        cr_assert_geq(fd, 0, "%s", path);
        text = malloc(32 << 20);
        *length = read_all(fd, text, 32 << 20);
        close(fd);
        unlink(path);
        break;
    }
    closedir(dir);
    return text;
}

Test(threads, a_thousand_threads, .timeout = 60)
{
    static struct child_result result;
    char directory[] = "/tmp/execinfo_ex_threads_XXXXXX", options[128];
    cr_assert_not_null(mkdtemp(directory));
    /* The deadline only bounds: the gathering ends when all have answered. */
    snprintf(options, sizeof options, "report=%s/report-%%p:threads_timeout_ms=30000", directory);
    run_child(crash_with_a_thousand, options, &result);
    size_t length = 0;
    char *report = read_only_file(directory, &length);
    rmdir(directory);
    assert_died_by(&result, SIGSEGV);
    cr_assert_not_null(report, "no report file in %s; stderr:\n%s", directory, result.output);
    cr_assert(strstr(report, "*** end of report\n"), "%.4000s", report);
    cr_assert(strstr(report, "*** other threads (1000), by tid:\n"), "%.4000s", report);
    cr_assert_eq(count_of(report, "*** thread "), THOUSAND);
    cr_assert(!strstr(report, "left out"), "%.4000s", report);
    char *problem = check_thread_lines(report);
    cr_assert(problem == NULL, "%s", problem);
    int without_reason = 0, in_crowd_body = 0;
    for (const char *at = strstr(report, "*** thread "); at != NULL; at = strstr(at + 1, "*** thread ")) {
        char *header = first_line(at);
        if (matches(header, READ_HEADER))
            without_reason++;
        else
            fprintf(stderr, "not read: %s\n", header);
        free(header);
    }
    in_crowd_body = count_of(report, "(crowd_body+");
    cr_assert_eq(without_reason, THOUSAND, "%d of 1000 read", without_reason);
    cr_assert_eq(in_crowd_body, THOUSAND, "%d of 1000 in crowd_body", in_crowd_body);
    free(report);
}

#ifndef __SANITIZE_ADDRESS__
/* ---- 13. the gathering never allocates ---- */

static void *nothing(void *unused) { return unused; }

static void crash_under_the_trap(void *unused)
{
    (void)unused;
    install_or_exit(NULL);
    /* The trap sees the library's own allocations: its pthread_create
     * wrapper allocates one (its alternate-stack start). */
    pthread_t thread;
    atomic_store(&trap_count, 0);
    atomic_store(&trap_mode, TRAP_COUNT);
    int error = pthread_create(&thread, NULL, nothing, NULL);
    atomic_store(&trap_mode, TRAP_OFF);
    CHILD_CHECK(error == 0, "pthread_create");
    pthread_join(thread, NULL);
    say("control_trapped", atomic_load(&trap_count));

    open_never_written();
    say("sleeper", start_worker(sleeper_body, &sleeper));
    say("reader", start_worker(reader_body, &reader));
    say("spinner", start_worker(spinner_body, &spinner));
    say("blocker", start_worker(blocker_body, &blocker));
    wait_for_state(sleeper.tid, "S");
    wait_for_state(reader.tid, "S");
    wait_for_state(blocker.tid, "S");
    atomic_store(&trap_count, 0);
    atomic_store(&trap_mode, TRAP_ARMED);
    write_to_null();
}

Test(threads, the_gathering_never_allocates, .timeout = 30)
{
    static struct child_result result;
    run_child(crash_under_the_trap, NULL, &result);
    const char *out = result.output;
    cr_assert_geq(said(out, "control_trapped"), 1, "the trap does not see the library's calls:\n%s",
                  out);
    assert_died_by(&result, SIGSEGV);
    cr_assert(!strstr(out, "TRAP:"), "an allocation during the report:\n%s", out);
    cr_assert(strstr(out, "*** end of report"), "%s", out);
    cr_assert_eq(count_of(out, "*** thread "), 4, "%s", out);
    static const char *const names[] = { "sleeper", "reader", "spinner" };
    for (int i = 0; i < 3; i++)
        assert_read_in(out, names[i]);
    cr_assert(strstr(out, "\"blocker\" S (sleeping): blocks every signal"), "%s", out);
    assert_thread_lines_well_formed(out);
}
#endif
