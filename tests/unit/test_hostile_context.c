/* backtrace_ucontext on contexts a crash can leave behind: a stack pointer
 * into nothing, a stack full of garbage, a pc in no module. The walk must
 * stop cleanly, never fault. */
#define _GNU_SOURCE
#include <execinfo_ex.h>
#include <stdint.h>
#include <ucontext.h>

#include "support.h"
#include "test_asm.h"

__attribute__((noinline)) static int some_function(int x)
{
    return x * 7;
}

#define fill_context test_fill_context /* test_asm.h: the pc, sp and frame pointer */

Test(hostile_context, unmapped_stack_pointer_gives_the_pc_only)
{
    ucontext_t context;
    void *frames[16];
    fill_context(&context, (uintptr_t)some_function + 4, 0x1000, 0x2000);
    int count = backtrace_ucontext(frames, 16, &context);
    cr_assert_eq(count, 1);
    cr_assert_eq(frames[0], (void *)((uintptr_t)some_function + 4));
}

Test(hostile_context, garbage_stack_ends_the_walk)
{
    static uintptr_t garbage[4096];
    unsigned seed = 7;
    for (size_t i = 0; i < 4096; i++) {
        seed = seed * 1103515245u + 12345u;
        garbage[i] = i % 3 ? (uintptr_t)seed << 13 : (uintptr_t)some_function + (seed % 64);
    }
    ucontext_t context;
    void *frames[64];
    for (int start = 0; start < 2048; start += 97) {
        fill_context(&context, (uintptr_t)some_function + 2, (uintptr_t)&garbage[start],
                     (uintptr_t)&garbage[start + 8]);
        int count = backtrace_ucontext(frames, 64, &context);
        cr_assert_geq(count, 1);
        cr_assert_leq(count, 64);
    }
}

/* A pc in no module is read as a bad call, whose return address would be
 * at the stack pointer: here there is none (0), so the pc is all. A pc of
 * 0 is a frame too (a call through NULL, test_naming.c walks on from it). */
Test(hostile_context, pc_in_no_module_is_the_only_frame)
{
    ucontext_t context;
    void *frames[16];
    uintptr_t stack[64] = { 0 };
    fill_context(&context, 0x12345678, (uintptr_t)stack, 0);
    cr_assert_eq(backtrace_ucontext(frames, 16, &context), 1);
    fill_context(&context, 0, (uintptr_t)stack, 0);
    cr_assert_eq(backtrace_ucontext(frames, 16, &context), 1);
    cr_assert_null(frames[0]);
}

Test(hostile_context, misaligned_stack_pointer_stops)
{
    ucontext_t context;
    void *frames[16];
    uintptr_t stack[64] = { 0 };
    fill_context(&context, (uintptr_t)some_function + 4, (uintptr_t)stack + 3, 0);
    cr_assert_eq(backtrace_ucontext(frames, 16, &context), 1);
}
