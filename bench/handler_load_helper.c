/* handler_load_helper.c: a program of ten shared libraries, for parts 7b
 * (load and install time) and 7c (memory) of bench/handler.c.
 *
 *     handler_load_helper_* FD
 *
 * FD is the shared page (handler_page.h), where the parent stored the
 * time just before execve. Built three times from this source, each
 * linking libhandler_tiny1.so ... libhandler_tiny10.so:
 *   VARIANT=0  handler_load_helper_plain: without our library (also run
 *              with LD_PRELOAD=libexecinfo_ex.so EXECINFO_EX_OPTIONS=handler=1)
 *   VARIANT=1  handler_load_helper_ours: linked with libexecinfo_ex.so,
 *              after libhandler_tiny1.so and before the nine others, so
 *              that the loader runs our constructor (the index build)
 *              between tiny2's and tiny1's (handler_tiny.c); main times
 *              backtrace_install_fatal_handler(NULL), twice
 *   VARIANT=2  handler_load_helper_static: linked with libexecinfo_ex.a,
 *              so that the hidden index_statistics is reachable, and with
 *              a priority-101 constructor that runs before the library's
 *              (the executable's .init_array is sorted by priority): the
 *              time from it to main is the index build at load
 *
 * Every variant stores, in the page: the time main starts, VmRSS, RssAnon
 * and RssFile at main and after the install (at the same point in the
 * variants that do not install), and what a thread created after the
 * install has as alternate signal stack (sigaltstack; its guard page and
 * the rest of its mapping from /proc/self/maps; resident pages from
 * mincore). /proc files are read with open/read, not stdio, so that
 * reading them mallocs nothing. */
#define _GNU_SOURCE
#include "handler_page.h"
#include "timing.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if VARIANT == 1
#include <execinfo_ex.h>
#endif

int handler_tiny1(int), handler_tiny2(int), handler_tiny3(int), handler_tiny4(int),
    handler_tiny5(int), handler_tiny6(int), handler_tiny7(int), handler_tiny8(int),
    handler_tiny9(int), handler_tiny10(int);
extern uint64_t handler_tiny1_init_ns, handler_tiny2_init_ns, handler_tiny3_init_ns,
    handler_tiny4_init_ns, handler_tiny5_init_ns, handler_tiny6_init_ns, handler_tiny7_init_ns,
    handler_tiny8_init_ns, handler_tiny9_init_ns, handler_tiny10_init_ns;

static struct handler_page *page;
static char text[1 << 16];

static size_t read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t used = 0;
    if (fd < 0)
        return 0;
    for (;;) {
        ssize_t got = read(fd, text + used, sizeof text - 1 - used);
        if (got <= 0)
            break;
        used += (size_t)got;
        if (used == sizeof text - 1)
            break;
    }
    close(fd);
    text[used] = '\0';
    return used;
}

static uint64_t status_kib(const char *name)
{
    const char *line = strstr(text, name);
    return line != NULL ? strtoull(line + strlen(name), NULL, 10) : 0;
}

static void memory(uint64_t *rss, uint64_t *anon, uint64_t *file)
{
    read_file("/proc/self/status");
    *rss = status_kib("\nVmRSS:");
    *anon = status_kib("\nRssAnon:");
    *file = status_kib("\nRssFile:");
}

/* The alternate stack of the calling thread, and the mappings around it. */
static void *look_at_alternate_stack(void *unused)
{
    stack_t stack;
    (void)unused;
    if (sigaltstack(NULL, &stack) != 0)
        return NULL;
    page->thread_ss_flags = stack.ss_flags;
    if (stack.ss_flags & SS_DISABLE)
        return NULL;
    page->thread_ss_size = stack.ss_size;
    uintptr_t low = (uintptr_t)stack.ss_sp, high = low + stack.ss_size;
    uintptr_t region_start = low, region_end = high;
    read_file("/proc/self/maps");
    for (char *line = text; *line != '\0';) {
        char *end_of_line = strchr(line, '\n');
        unsigned long start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) {
            if (end == low && strcmp(perms, "---p") == 0) {
                page->thread_guard_bytes = end - start;
                region_start = start;
            }
            if (start <= low && low < end && end >= high) {
                page->thread_above_bytes = end - high;
                region_end = end;
            }
        }
        if (end_of_line == NULL)
            break;
        line = end_of_line + 1;
    }
    long page_size = sysconf(_SC_PAGESIZE);
    size_t pages = (region_end - region_start) / (size_t)page_size;
    unsigned char residency[pages ? pages : 1];
    if (mincore((void *)region_start, region_end - region_start, residency) == 0) {
        for (size_t i = 0; i < pages; i++)
            page->thread_resident_bytes += (residency[i] & 1) ? (uint64_t)page_size : 0;
    }
    return NULL;
}

#if VARIANT == 2
struct index_statistics {
    size_t modules, symbols, lines, mapped_bytes;
};
void index_statistics(struct index_statistics *out);

static uint64_t constructor_ns;
static int built_before_us;

__attribute__((constructor(101))) static void before_the_library(void)
{
    struct index_statistics statistics;
    index_statistics(&statistics);
    built_before_us = statistics.modules != 0;
    constructor_ns = now_ns();
}
#endif

int main(int argc, char **argv)
{
    uint64_t main_ns = now_ns();
    if (argc != 2 || (page = handler_page_map(atoi(argv[1]))) == NULL)
        return 2;
    page->main_ns = main_ns;
    const uint64_t stamps[HANDLER_TINY_LIBRARIES] = {
        handler_tiny1_init_ns, handler_tiny2_init_ns, handler_tiny3_init_ns,
        handler_tiny4_init_ns, handler_tiny5_init_ns, handler_tiny6_init_ns,
        handler_tiny7_init_ns, handler_tiny8_init_ns, handler_tiny9_init_ns,
        handler_tiny10_init_ns,
    };
    page->constructor_order_ok = stamps[0] != 0 && stamps[0] <= main_ns;
    for (int i = 1; i < HANDLER_TINY_LIBRARIES; i++)
        page->constructor_order_ok &= stamps[i] != 0 && stamps[i] <= stamps[i - 1];
    page->first_constructor_ns = stamps[HANDLER_TINY_LIBRARIES - 1];
    page->tiny2_to_tiny1_ns = stamps[0] - stamps[1];
    page->tiny1_to_main_ns = main_ns - stamps[0];
    memory(&page->rss_main, &page->rss_anon_main, &page->rss_file_main);
    int sum = handler_tiny1(1) + handler_tiny2(2) + handler_tiny3(3) + handler_tiny4(4) +
              handler_tiny5(5) + handler_tiny6(6) + handler_tiny7(7) + handler_tiny8(8) +
              handler_tiny9(9) + handler_tiny10(10);
    if (sum == 0)
        return 3;
#if VARIANT == 1
    uint64_t start = now_ns();
    if (backtrace_install_fatal_handler(NULL) != 0)
        return 4;
    page->install_ns = now_ns() - start;
    start = now_ns();
    if (backtrace_install_fatal_handler(NULL) != 0)
        return 4;
    page->install_again_ns = now_ns() - start;
#elif VARIANT == 2
    struct index_statistics statistics;
    index_statistics(&statistics);
    if (built_before_us || statistics.modules == 0)
        return 5; /* the index was not built between our constructor and main */
    page->index_ns = main_ns - constructor_ns;
    page->index_modules = statistics.modules;
    page->index_symbols = statistics.symbols;
    page->index_lines = statistics.lines;
    page->index_mapped = statistics.mapped_bytes;
#endif
    stack_t main_stack;
    if (sigaltstack(NULL, &main_stack) == 0) {
        page->main_ss_flags = main_stack.ss_flags;
        page->main_ss_size = (main_stack.ss_flags & SS_DISABLE) ? 0 : main_stack.ss_size;
    }
    memory(&page->rss_end, &page->rss_anon_end, &page->rss_file_end);
    pthread_t thread;
    if (pthread_create(&thread, NULL, look_at_alternate_stack, NULL) != 0 ||
        pthread_join(thread, NULL) != 0)
        return 6;
    return 0;
}
