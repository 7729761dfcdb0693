/* program.c: the README's "./program args" for tests/readme/run.sh: a
 * correct program (every block is freed), built with no library, that
 * calls mtrace() and muntrace() (a program --mtrace can trace too), and
 * exits 0 whatever its arguments. It says what was loaded into it, so
 * that a preload that did nothing (ld.so's one line of warning, then a
 * run unchecked) fails the test:
 *   program: N arguments; fatal handler: yes|no; heap layer: yes|no */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mcheck.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct sigaction current;
    int handler = sigaction(SIGSEGV, NULL, &current) == 0 && current.sa_handler != SIG_DFL;
    int heap = dlsym(RTLD_DEFAULT, "malloc_state_size") != NULL;

    mtrace();
    for (int i = 0; i < argc; i++) {
        char *copy = strdup(argv[i]);
        free(copy);
    }
    free(malloc(100));
    muntrace();
    printf("program: %d arguments; fatal handler: %s; heap layer: %s\n", argc - 1,
           handler ? "yes" : "no", heap ? "yes" : "no");
    return 0;
}
