/* handler_page.h: the page that part 7 (bench/handler.c) shares with its
 * fresh child processes (handler_crash_helper, handler_load_helper).
 *
 * A MAP_SHARED mapping of a memfd: the parent creates it, the child
 * inherits the descriptor across fork + exec (argv[1] is its number) and
 * maps it too, so what the child stores there is still readable after the
 * child has died by its signal. Every time is CLOCK_MONOTONIC in ns
 * (timing.h's now_ns), which is one clock for every process. */
#ifndef BENCH_HANDLER_PAGE_H
#define BENCH_HANDLER_PAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Frames of the crash trace: see bench/handler_module.c. */
#define HANDLER_CRASH_FRAMES 30
/* Levels of the call chain in each module: the executable, then the four
 * libraries libhandler_m1.so ... libhandler_m4.so (m4 faults). With main,
 * _start and libc's two start-up frames: 6 + 5 * 4 + 4 = 30 frames. */
#define HANDLER_LEVELS_EXE 6
#define HANDLER_LEVELS_MODULE 5
/* Tiny libraries linked into handler_load_helper. */
#define HANDLER_TINY_LIBRARIES 10

struct handler_page {
    /* both helpers */
    uint64_t exec_ns;        /* the child, just before execve */
    uint64_t main_ns;        /* the helper, first thing in main */
    int status;              /* the helper: 0 when its setup went right */
    /* handler_crash_helper */
    uint64_t fault_address;  /* the address the chain writes to */
    uint64_t fault_ns;       /* t0: just before the faulting write */
    long minflt_fault, minflt_callback, majflt_fault, majflt_callback; /* getrusage */
    uint64_t callback_ns;    /* t1: first thing in the crash callback */
    int callback_calls;
    int callback_frames;     /* backtrace_ucontext in the callback, after t1 */
    int callback_format;
    int callback_signo;
    /* handler_load_helper */
    uint64_t index_ns;       /* static variant: the library's constructor */
    /* The tiny libraries' constructor stamps (handler_tiny.c). The loader
     * runs them tiny10 first ... tiny1 last; linked after tiny1 and before
     * tiny2, ours runs between tiny2 and tiny1; preloaded, after tiny1. */
    uint64_t first_constructor_ns; /* tiny10's stamp */
    uint64_t tiny2_to_tiny1_ns;
    uint64_t tiny1_to_main_ns;
    int constructor_order_ok;      /* the stamps run tiny10, ..., tiny1 */
    uint64_t install_ns;     /* backtrace_install_fatal_handler(NULL) */
    uint64_t install_again_ns; /* a second call, in the same process */
    uint64_t rss_main, rss_anon_main, rss_file_main;     /* KiB, at main */
    uint64_t rss_end, rss_anon_end, rss_file_end;        /* KiB, after the install */
    uint64_t index_modules, index_symbols, index_lines, index_mapped; /* static variant */
    /* the alternate stack of a thread created after the install */
    uint64_t thread_ss_size;
    int thread_ss_flags;     /* SS_DISABLE when the thread has none */
    uint64_t thread_guard_bytes;   /* PROT_NONE mapping right below ss_sp */
    uint64_t thread_above_bytes;   /* the same mapping's bytes above ss_sp + ss_size */
    uint64_t thread_resident_bytes; /* mincore over guard + stack + above */
    uint64_t main_ss_size;   /* the installing thread's */
    int main_ss_flags;
};

/* Map the page behind descriptor FD (the helpers) or NULL. */
static inline struct handler_page *handler_page_map(int fd)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return page == MAP_FAILED ? NULL : (struct handler_page *)page;
}

#endif
