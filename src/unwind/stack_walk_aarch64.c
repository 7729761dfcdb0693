/* stack_walk_aarch64.c: the walker's aarch64 parts (stack_walk_arch.h).
 * World: signal-safe (no lock, no malloc; reads through stack_walk_read).
 *
 * On a real kernel the signal trampoline is __kernel_rt_sigreturn in the
 * vDSO, which has CFI: the generic step crosses it. qemu-user 7.2 gives
 * programs no vDSO, and its trampoline has no CFI, so it is recognised
 * here by its two instructions, as libgcc's aarch64 fallback
 * (linux-unwind.h) does. Under qemu only this path is tested. */
#define _GNU_SOURCE
#include "stack_walk_arch.h"

#include "../base/memory_read.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define MOV_X8_RT_SIGRETURN 0xd2801168u /* mov x8, #139 (__NR_rt_sigreturn) */
#define SVC_ZERO 0xd4000001u            /* svc #0 */
/* The kernel's struct rt_sigframe: a siginfo (128 bytes), then the
 * ucontext, whose layout glibc's ucontext_t repeats (a 128-byte sigset,
 * then the 16-byte aligned mcontext). sp points at the frame. */
#define SIGINFO_SIZE 128

void stack_walk_arch_load_ucontext(struct stack_walk *walk, const ucontext_t *context)
{
    for (int r = 0; r < 31; r++)
        walk->registers[r] = (uintptr_t)context->uc_mcontext.regs[r];
    walk->registers[CFI_SP] = (uintptr_t)context->uc_mcontext.sp;
    walk->registers[CFI_PC] = (uintptr_t)context->uc_mcontext.pc;
    walk->known = ALL_KNOWN;
}

/* Code is read with memory_read, which fails instead of faulting (and
 * reads after a maps lookup under qemu-user, which has no
 * process_vm_readv), not through the walk's stack mappings. */
static int read_code(uint32_t code[2], uintptr_t pc)
{
    return memory_read(code, pc, 2 * sizeof *code) == (ssize_t)(2 * sizeof *code);
}

static int is_sigreturn_trampoline(uintptr_t pc)
{
    uint32_t code[2];
    return pc % 4 == 0 && read_code(code, pc) && code[0] == MOV_X8_RT_SIGRETURN &&
           code[1] == SVC_ZERO;
}

/* The interrupted registers, from the ucontext the trampoline returns. */
static int step_through_signal_frame(struct stack_walk *walk)
{
    uintptr_t mcontext = walk->registers[CFI_SP] + SIGINFO_SIZE +
                         offsetof(ucontext_t, uc_mcontext);
    uintptr_t next[CFI_REGISTER_COUNT];
    for (int r = 0; r < 31; r++)
        if (stack_walk_read(walk, mcontext + offsetof(mcontext_t, regs) + 8 * (size_t)r,
                            &next[r]) < 0)
            return 0;
    if (stack_walk_read(walk, mcontext + offsetof(mcontext_t, sp), &next[CFI_SP]) < 0 ||
        stack_walk_read(walk, mcontext + offsetof(mcontext_t, pc), &next[CFI_PC]) < 0)
        return 0;
    for (int r = 0; r < CFI_REGISTER_COUNT; r++)
        walk->registers[r] = next[r];
    walk->known = ALL_KNOWN;
    walk->crossed_sp = next[CFI_SP];
    walk->pc_is_exact = 1; /* the interrupted instruction itself */
    walk->last_step_simple = 0;
    return 1;
}

/* Whether PC is one of the four instructions of a PLT stub (adrp x16;
 * ldr x17, [x16, #n]; add x16, x16, #n; br x17), which touch neither sp
 * nor x30. GNU ld writes no CFI for aarch64's .plt, so a signal that
 * interrupts a stub (found by test_capture_exact under SIGALRM) needs
 * this to go on. */
static int is_plt_stub_instruction(uintptr_t pc)
{
    uint32_t word;
    if (pc % 4 != 0 || memory_read(&word, pc, sizeof word) != (ssize_t)sizeof word)
        return 0;
    return (word & 0x9f00001fu) == 0x90000010u ||   /* adrp x16, page */
           (word & 0xffc003ffu) == 0xf9400211u ||   /* ldr x17, [x16, #n] */
           (word & 0xffc003ffu) == 0x91000210u ||   /* add x16, x16, #n */
           word == 0xd61f0220u;                     /* br x17 */
}

/* A call through a bad pointer (blr to an address with no code) leaves
 * the return address in x30, and sp as the caller had it; so does a
 * PLT stub. */
static int step_out_of_a_bad_call(struct stack_walk *walk)
{
    struct dl_find_object object;
    uintptr_t pc = walk->registers[CFI_PC];
    uintptr_t lr = unwind_arch_strip(walk->registers[CFI_RETURN_ADDRESS]);
    if (!walk->pc_is_exact || !(walk->known & CFI_BIT(CFI_RETURN_ADDRESS)) ||
        !(walk->known & CFI_BIT(CFI_SP)) || lr == 0 || lr == pc ||
        (_dl_find_object((void *)pc, &object) == 0 && !is_plt_stub_instruction(pc)))
        return 0;
    walk->registers[CFI_PC] = lr;
    walk->known &= CFI_BIT(CFI_PC) | CFI_BIT(CFI_SP) | CFI_BIT(CFI_FP);
    walk->pc_is_exact = 0;
    walk->last_step_simple = 0;
    return 1;
}

/* The trampoline is reached as a "return address" that is the
 * trampoline's first instruction (the handler's x30), exact or not. */
int stack_walk_arch_step_without_cfi(struct stack_walk *walk)
{
    if (is_sigreturn_trampoline(walk->registers[CFI_PC]))
        return step_through_signal_frame(walk);
    return step_out_of_a_bad_call(walk);
}
