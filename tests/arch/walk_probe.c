/* walk_probe.c: a hand-run probe of the aarch64 walker under qemu-user
 * (issue 27), until tests/aarch64.mk runs the real suites. Not built by
 * make. From the source tree:
 *
 *   S="src/unwind/stack_walk.c src/unwind/stack_walk_aarch64.c src/unwind/dwarf_cfi.c
 *      src/unwind/dwarf_expression.c src/unwind/eh_frame_locate.c src/unwind/rule_cache.c
 *      src/base/maps_reader.c"
 *   aarch64-linux-gnu-gcc -O2 -g -std=gnu11 -Isrc -Iinclude tests/arch/walk_probe.c $S -o /tmp/p
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu /tmp/p            # fault in a leaf (x30 path)
 *   FROM_HERE=1 qemu-aarch64 -L /usr/aarch64-linux-gnu /tmp/p # through qemu's trampoline
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu /tmp/p null       # a call through NULL
 *   (add -mbranch-protection=pac-ret, and qemu's -cpu max, for pointer authentication)
 *
 * Each run prints the frames from the fault to _start: leaf, middle,
 * outer, main, libc's start, _start. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>
#include "unwind/stack_walk.h"

static void handler(int signo, siginfo_t *info, void *uc)
{
    (void)signo; (void)info;
    struct stack_walk walk;
    if (getenv("FROM_HERE")) {
        uintptr_t pc, sp, fp;
        UNWIND_ARCH_HERE(pc, sp, fp);
        stack_walk_begin(&walk, pc, sp, fp);
    } else
        stack_walk_begin_ucontext(&walk, uc);
    int n = 0;
    do {
        printf("frame %d pc %#lx sp %#lx%s\n", n, (unsigned long)walk.registers[CFI_PC], (unsigned long)walk.registers[CFI_SP], walk.pc_is_exact ? " exact" : "");
    } while (++n < 20 && stack_walk_step(&walk) > 0);
    fflush(stdout);
    _exit(0);
}

static int run(int argc);

__attribute__((noinline)) void leaf(volatile int *p) { *p = 1; }
__attribute__((noinline)) void middle(volatile int *p) { leaf(p); __asm__ volatile(""); }
__attribute__((noinline)) void outer(volatile int *p) { middle(p); __asm__ volatile(""); }

int main(int argc, char **argv)
{
    (void)argv;
    return run(argc);
}

static int run(int argc)
{
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    printf("leaf %p middle %p outer %p main %p\n", (void*)leaf, (void*)middle, (void*)outer, (void*)main);
    if (argc > 1) { void (*f)(void) = NULL; f(); }
    outer(NULL);
    return 0;
}
