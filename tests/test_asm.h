/* test_asm.h: the few functions the tests write in assembly, one header
 * per architecture (test_asm_x86_64.h, test_asm_aarch64.h), as the
 * library's own *_ARCH files. Each defines:
 *   call_plain_with_garbage(handler, signo, garbage): HANDLER(SIGNO) by a
 *     tail call, with the registers of a SA_SIGINFO handler's second and
 *     third arguments set to GARBAGE;
 *   breakpoint_at_the_end: a breakpoint instruction (int3, brk #0) and
 *     nothing after it; function_after_the_breakpoint follows it;
 *   rbx_frame(callee): a frame whose CFA is kept in the callee-saved
 *     register the walk hands on (rbx, x19), over a realigned stack;
 *     TEST_ASM_CLOBBER_RBX() changes that register;
 *   test_fill_context(context, pc, sp, fp): a ucontext with those three;
 *   test_same_as_libunwind(ours, theirs): one frame of ours and of
 *     unw_backtrace agree (libunwind's convention differs by architecture);
 *   test_libunwind_count(theirs, count): unw_backtrace's count without
 *     the frames it repeats where our walk ends;
 *   TEST_TRAP_SIGNAL, TEST_TRAP_HEADLINE, TEST_BREAKPOINT_HEADLINE: what
 *     __builtin_trap and the breakpoint raise, as the report says it;
 *   TEST_MULTIARCH: the architecture's library directory name. */
#ifndef EXECINFO_EX_TEST_ASM_H
#define EXECINFO_EX_TEST_ASM_H

#include <stdint.h>

void call_plain_with_garbage(void (*handler)(int), int signo, uintptr_t garbage);
void breakpoint_at_the_end(void);
void function_after_the_breakpoint(void);
void rbx_frame(void (*callee)(void));

#if defined(__x86_64__)
#include "test_asm_x86_64.h"
#elif defined(__aarch64__)
#include "test_asm_aarch64.h"
#else
#error "tests: x86_64 and aarch64 only; add test_asm_ARCH.h"
#endif

#endif
