/* heap_user.c: an ordinary program for execinfo_ex_heap in
 * tests/integration/run.sh, built with no library at all.
 *   heap_user ok ARG...   allocates and frees correctly, prints each ARG on
 *                         its own line, exits 0
 *   heap_user exit N      exits N
 *   heap_user overflow    writes one byte past a 24-byte block that
 *                         overflow_victim allocated, frees it, then exits 5
 *                         (reached with --on-error=report only)
 *   heap_user leak        mtrace(), leaks 4 blocks of 100 bytes from
 *                         leak_victim, muntrace(), exits 0
 *   heap_user leak-quiet  leaks 3 blocks of 100 bytes from leak_victim,
 *                         frees one of 50, never calls mtrace(), exits 0 */
#include <mcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *overflow_victim(size_t size)
{
    char *block = malloc(size);
    __asm__ volatile("" ::"r"(block) : "memory");
    return block;
}

__attribute__((noinline)) static void *leak_victim(void)
{
    void *block = malloc(100);
    __asm__ volatile("" ::"r"(block) : "memory");
    return block;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "ok") == 0) {
        for (int i = 2; i < argc; i++) {
            char *copy = strdup(argv[i]);
            puts(copy);
            free(copy);
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "exit") == 0)
        return atoi(argv[2]);
    if (argc == 2 && strcmp(argv[1], "overflow") == 0) {
        char *block = overflow_victim(24);
        block[24] = 'x';
        free(block);
        return 5;
    }
    if (argc == 2 && strcmp(argv[1], "leak") == 0) {
        mtrace();
        for (int i = 0; i < 4; i++)
            leak_victim();
        free(malloc(50));
        muntrace();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "leak-quiet") == 0) {
        for (int i = 0; i < 3; i++)
            leak_victim();
        free(malloc(50));
        return 0;
    }
    fputs("usage: heap_user ok ARG... | exit N | overflow | leak | leak-quiet\n", stderr);
    return 2;
}
