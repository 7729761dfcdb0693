/* handler_module.c: one of the four shared libraries that the crash of
 * part 7 passes through. Built four times, -DMODULE=1 ... -DMODULE=4, into
 * build/bench/libhandler_m1.so ... libhandler_m4.so; each links the next,
 * and the last one faults.
 *
 * Each library is entered through its exported handler_mN_enter and then
 * recurses HANDLER_LEVELS_MODULE - 1 times through a static function (so
 * that the report has to name static functions of a library, from
 * .symtab: none of them is in .dynsym). Every level is noipa and does work
 * after its call, so it is one real frame: no inlining, no tail call, no
 * recursion turned into a loop. -O2 -g, -fPIC, no -rdynamic. */
#include "handler_page.h"
#include "timing.h"

#include <sys/resource.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define ENTER(n) CAT(CAT(handler_m, n), _enter)
#define LEVEL CAT(CAT(handler_m, MODULE), _level)

int ENTER(MODULE)(int depth, struct handler_page *page);
int handler_m2_enter(int depth, struct handler_page *page);
int handler_m3_enter(int depth, struct handler_page *page);
int handler_m4_enter(int depth, struct handler_page *page);

static volatile int sink;

__attribute__((noipa)) static int LEVEL(int depth, struct handler_page *page)
{
    int result;

    if (depth > 1) {
        result = LEVEL(depth - 1, page);
    } else {
#if MODULE < 4
#if MODULE == 1
        result = handler_m2_enter(HANDLER_LEVELS_MODULE, page);
#elif MODULE == 2
        result = handler_m3_enter(HANDLER_LEVELS_MODULE, page);
#else
        result = handler_m4_enter(HANDLER_LEVELS_MODULE, page);
#endif
#else
        /* The page faults so far, t0, then the fault: a write to an
         * address the compiler cannot know (it is read from the shared
         * page), so it stays a plain store and faults with SIGSEGV. */
        volatile int *target = (volatile int *)(uintptr_t)page->fault_address;
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        page->minflt_fault = usage.ru_minflt;
        page->majflt_fault = usage.ru_majflt;
        page->fault_ns = now_ns();
        *target = 1;
        result = *target;
#endif
    }
    sink = result;
    __asm__ volatile("" ::: "memory");
    return result + 1;
}

__attribute__((noipa)) int ENTER(MODULE)(int depth, struct handler_page *page)
{
    int result = LEVEL(depth - 1, page);
    sink = result;
    __asm__ volatile("" ::: "memory");
    return result + 1;
}
