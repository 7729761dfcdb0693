/* minidump_context_aarch64.c: the ARM64 context record for the minidump.
 * World: signal-safe (pure).
 *
 * Breakpad knows two ARM64 layouts: MDRawContextARM64 (Windows'
 * CONTEXT_ARM64, flags 0x00400000, architecture 12) and
 * MDRawContextARM64_Old (flags 0x80000000, architecture 0x8003). This
 * writes the old one, which is what Breakpad's own Linux client writes
 * (minidump_writer.cc: RawContextCPU is MDRawContextARM64_Old on
 * aarch64) and what minidump_format.h's MD_CPU_ARCHITECTURE_ARM64 names;
 * minidump_stackwalk reads both. */
#define _GNU_SOURCE
#include "minidump_context.h"

#include <string.h>

#define MD_CONTEXT_ARM64_OLD 0x80000000u
#define MD_CONTEXT_ARM64_CONTROL_OLD (MD_CONTEXT_ARM64_OLD | 0x1u)
#define MD_CONTEXT_ARM64_INTEGER_OLD (MD_CONTEXT_ARM64_OLD | 0x2u)
#define MD_CONTEXT_ARM64_FLOATING_POINT_OLD (MD_CONTEXT_ARM64_OLD | 0x4u)

typedef struct { uint64_t low, high; } md_uint128;

#pragma pack(push, 4)
struct md_float_save_arm64_old {
    uint32_t fpsr;
    uint32_t fpcr;
    md_uint128 regs[32];
};

struct md_raw_context_arm64_old {
    uint64_t context_flags;
    uint64_t iregs[32]; /* x0..x30, sp */
    uint64_t pc;
    uint32_t cpsr;
    struct md_float_save_arm64_old float_save;
};
#pragma pack(pop)

_Static_assert(sizeof(struct md_raw_context_arm64_old) == 796, "MDRawContextARM64_Old");
_Static_assert(sizeof(struct md_raw_context_arm64_old) <= MINIDUMP_CONTEXT_SIZE_MAX,
               "MINIDUMP_CONTEXT_SIZE_MAX");

/* The kernel's FP/SIMD record in uc_mcontext.__reserved (struct
 * fpsimd_context of <asm/sigcontext.h>, spelled here so that the kernel's
 * header does not meet glibc's). Records follow one another, each with
 * its magic and size, until a zero magic. */
#define FPSIMD_MAGIC 0x46508001u
struct record_head {
    uint32_t magic;
    uint32_t size;
};
struct fpsimd_record {
    struct record_head head;
    uint32_t fpsr;
    uint32_t fpcr;
    md_uint128 vregs[32];
};

size_t minidump_context_size(void)
{
    return sizeof(struct md_raw_context_arm64_old);
}

static const struct fpsimd_record *find_fpsimd(const ucontext_t *uc)
{
    const unsigned char *at = uc->uc_mcontext.__reserved;
    const unsigned char *end = at + sizeof uc->uc_mcontext.__reserved;
    while (at + sizeof(struct record_head) <= end) {
        struct record_head head;
        memcpy(&head, at, sizeof head);
        if (head.magic == 0 || head.size < sizeof head || head.size > (size_t)(end - at))
            return NULL;
        if (head.magic == FPSIMD_MAGIC && head.size >= sizeof(struct fpsimd_record))
            return (const struct fpsimd_record *)at;
        at += head.size;
    }
    return NULL;
}

/* As Breakpad's UContextReader fills it from a signal's ucontext. */
void minidump_context_from_ucontext(void *out, const ucontext_t *uc, int have_float_state)
{
    struct md_raw_context_arm64_old *context = out;
    memset(context, 0, sizeof *context);
    context->context_flags = MD_CONTEXT_ARM64_CONTROL_OLD | MD_CONTEXT_ARM64_INTEGER_OLD;
    for (int i = 0; i < 31; i++)
        context->iregs[i] = uc->uc_mcontext.regs[i];
    context->iregs[31] = uc->uc_mcontext.sp;
    context->pc = uc->uc_mcontext.pc;
    context->cpsr = (uint32_t)uc->uc_mcontext.pstate;
    const struct fpsimd_record *fpsimd = have_float_state ? find_fpsimd(uc) : NULL;
    if (fpsimd != NULL) {
        context->float_save.fpsr = fpsimd->fpsr;
        context->float_save.fpcr = fpsimd->fpcr;
        memcpy(context->float_save.regs, fpsimd->vregs, sizeof context->float_save.regs);
        context->context_flags |= MD_CONTEXT_ARM64_FLOATING_POINT_OLD;
    }
}

void minidump_context_from_stack_pointer(void *out, uintptr_t sp, uintptr_t pc)
{
    struct md_raw_context_arm64_old *context = out;
    memset(context, 0, sizeof *context);
    context->context_flags = MD_CONTEXT_ARM64_CONTROL_OLD;
    context->iregs[31] = sp;
    context->pc = pc;
}

uintptr_t minidump_ucontext_stack_pointer(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.sp;
}

uintptr_t minidump_ucontext_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.pc;
}

/* MIDR_EL1 is readable from user space only where the kernel emulates it;
 * the architecture alone is written, as Breakpad does when /proc/cpuinfo
 * cannot be read. */
void minidump_describe_cpu(struct md_raw_system_info *info)
{
    info->processor_architecture = MD_CPU_ARCHITECTURE_ARM64;
}
