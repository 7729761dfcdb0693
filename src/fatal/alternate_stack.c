/* alternate_stack.c: alternate signal stacks, made and freed per thread.
 * World: normal (mmap, pthread keys). */
#define _GNU_SOURCE
#include "alternate_stack.h"
#include "../base/load_touched.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Enough for the report (about 5 KiB) on top of the kernel's frame, with
 * room to spare for the handlers we chain to. */
#define ALTERNATE_STACK_MINIMUM (64 * 1024)

struct mapping {
    void *memory;
    size_t size;
};

static LOAD_TOUCHED pthread_key_t stack_key;
static LOAD_TOUCHED pthread_once_t stack_key_once = PTHREAD_ONCE_INIT;

/* At thread exit: stop using our stack, then give it back. */
static void free_thread_stack(void *opaque)
{
    struct mapping *mapping = opaque;
    stack_t off = { .ss_flags = SS_DISABLE };
    sigaltstack(&off, NULL);
    munmap(mapping->memory, mapping->size);
}

static void create_key(void)
{
    pthread_key_create(&stack_key, free_thread_stack);
}

/* The stack's top page and the bookkeeping page above it, in one call:
 * the first signal's frame lands in that top page (the kernel's frame,
 * about 3.4 KiB with AVX-512 state, then the handler's first frames).
 * Faulted in when the signal comes, as it would be otherwise, it costs
 * each thread of an every-thread report a page fault inside the report
 * (10-15 us on the benchmark's virtual machine: 1.4 ms of 12 ms with 256
 * threads, docs/PERFORMANCE.md); populated here it costs no more than the
 * fault of the bookkeeping write it replaces. Kernels before 5.14 lack
 * MADV_POPULATE_WRITE: the pages are then faulted in when first used. */
static void populate_top(char *start, size_t length)
{
    madvise(start, length, MADV_POPULATE_WRITE);
}

/* From the kernel's auxiliary vector, as sysconf would (glibc's code for
 * it is a page of libc nothing else touches in a small program's start:
 * a page fault in every process, issue 26); sysconf where the kernel
 * gives no AT_MINSIGSTKSZ (x86 before Linux 5.14, arm64 before 4.18).
 * getauxval sets errno for an entry it lacks: kept as it was. */
static size_t page_size(void)
{
    unsigned long page = getauxval(AT_PAGESZ);
    return page != 0 ? (size_t)page : (size_t)sysconf(_SC_PAGESIZE);
}

static long minimum_signal_stack(void)
{
    int saved_errno = errno;
    unsigned long minimum = getauxval(AT_MINSIGSTKSZ);
    errno = saved_errno;
    return minimum != 0 ? (long)minimum : sysconf(_SC_MINSIGSTKSZ);
}

/* FIRST_THREAD: the process's first thread, whose stack is never freed
 * before the process ends (nor is the thread's own), so it needs no key
 * and no bookkeeping, and nothing of it is written before a signal comes:
 * the install at load in every process then touches none of its pages
 * (issue 26). A report from this thread takes the top page's fault. */
static void give(int first_thread)
{
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE))
        return; /* the program's own alternate stack is respected */
    size_t page = page_size();
    long minimum = minimum_signal_stack();
    size_t size = ALTERNATE_STACK_MINIMUM;
    if (minimum > 0 && (size_t)minimum * 4 > size)
        size = ((size_t)minimum * 4 + page - 1) / page * page;
    /* [guard page][stack][the page of struct mapping, but the first thread's] */
    size_t total = page + size + (first_thread ? 0 : page);
    char *memory = mmap(NULL, total, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED)
        return;
    mprotect(memory, page, PROT_NONE); /* an overflow of the handler faults, not corrupts */
    if (!first_thread)
        populate_top(memory + page + size - page, 2 * page);
    stack_t stack = { .ss_sp = memory + page, .ss_size = size, .ss_flags = 0 };
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(memory, total);
        return;
    }
    if (first_thread)
        return;
    struct mapping *mapping = (struct mapping *)(memory + page + size);
    mapping->memory = memory;
    mapping->size = total;
    pthread_once(&stack_key_once, create_key);
    pthread_setspecific(stack_key, mapping);
}

void alternate_stack_give_this_thread(void)
{
    give(0);
}

void alternate_stack_give_installing_thread(void)
{
    give(getpid() == gettid());
}
