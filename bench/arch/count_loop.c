/* count_loop.c: the loops whose instructions bench/arch/count.sh counts
 * on both architectures (issue 27): qemu-aarch64's one-instruction blocks
 * on aarch64, callgrind on x86-64. Not timed, never a test.
 *
 *   count_loop capture N   N warm backtrace() calls of the same 30-frame
 *                          stack (one before, not counted: the index and
 *                          the memo are warm)
 *   count_loop heap N      N malloc(32)+free pairs at one call site, under
 *                          the hooks library (linked, so the same process
 *                          shape on both architectures)
 *
 * The per-call count is the difference of two runs (N and N + 10000)
 * divided by 10000: the start, the first call and the exit cancel out. */
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES 30

static void *frames[FRAMES];

__attribute__((noinline)) static int nest(int depth, int (*leaf)(void))
{
    int result = depth == 0 ? leaf() : nest(depth - 1, leaf);
    __asm__ volatile("" ::: "memory"); /* no tail call: every frame stays */
    return result;
}

static long iterations;

static int capture_leaf(void)
{
    int count = 0;
    for (long i = 0; i < iterations; i++)
        count = backtrace(frames, FRAMES);
    return count;
}

static int heap_leaf(void)
{
    for (long i = 0; i < iterations; i++) {
        void *block = malloc(32);
        __asm__ volatile("" : : "r"(block) : "memory");
        free(block);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    iterations = 1;   /* the warm-up: builds the index, fills the memo */
    int (*leaf)(void) = strcmp(argv[1], "capture") == 0 ? capture_leaf : heap_leaf;
    nest(40, leaf);
    iterations = atol(argv[2]);
    nest(40, leaf);
    return 0;
}
