/* minidump_context_x86_64.c: the AMD64 context record (Breakpad's
 * MDRawContextAMD64, Windows' CONTEXT) and the CPU's identification by
 * cpuid, for the minidump.
 * World: signal-safe (pure, and the cpuid instruction). */
#define _GNU_SOURCE
#include "minidump_context.h"

#include <cpuid.h>
#include <string.h>

#define MD_CONTEXT_AMD64 0x00100000u
#define MD_CONTEXT_AMD64_CONTROL (MD_CONTEXT_AMD64 | 0x1u)
#define MD_CONTEXT_AMD64_INTEGER (MD_CONTEXT_AMD64 | 0x2u)
#define MD_CONTEXT_AMD64_FLOATING_POINT (MD_CONTEXT_AMD64 | 0x8u)

typedef struct { uint64_t low, high; } md_uint128;

/* FXSAVE's layout (Breakpad's MDXmmSaveArea32AMD64). */
struct md_xmm_save_area {
    uint16_t control_word;
    uint16_t status_word;
    uint8_t tag_word;
    uint8_t reserved1;
    uint16_t error_opcode;
    uint32_t error_offset;
    uint16_t error_selector;
    uint16_t reserved2;
    uint32_t data_offset;
    uint16_t data_selector;
    uint16_t reserved3;
    uint32_t mx_csr;
    uint32_t mx_csr_mask;
    md_uint128 float_registers[8];
    md_uint128 xmm_registers[16];
    uint8_t reserved4[96];
};

struct md_raw_context_amd64 {
    uint64_t p1_home, p2_home, p3_home, p4_home, p5_home, p6_home;
    uint32_t context_flags;
    uint32_t mx_csr;
    uint16_t cs, ds, es, fs, gs, ss;
    uint32_t eflags;
    uint64_t dr0, dr1, dr2, dr3, dr6, dr7;
    uint64_t rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi;
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rip;
    struct md_xmm_save_area flt_save;
    md_uint128 vector_register[26];
    uint64_t vector_control;
    uint64_t debug_control;
    uint64_t last_branch_to_rip;
    uint64_t last_branch_from_rip;
    uint64_t last_exception_to_rip;
    uint64_t last_exception_from_rip;
};

_Static_assert(sizeof(struct md_xmm_save_area) == 512, "MDXmmSaveArea32AMD64");
_Static_assert(sizeof(struct md_raw_context_amd64) == MINIDUMP_CONTEXT_SIZE_MAX,
               "MDRawContextAMD64");

size_t minidump_context_size(void)
{
    return sizeof(struct md_raw_context_amd64);
}

static void copy_float_state(struct md_xmm_save_area *out, const struct _libc_fpstate *fpregs)
{
    out->control_word = fpregs->cwd;
    out->status_word = fpregs->swd;
    out->tag_word = (uint8_t)fpregs->ftw;
    out->error_opcode = fpregs->fop;
    out->error_offset = (uint32_t)fpregs->rip;
    out->data_offset = (uint32_t)fpregs->rdp;
    out->mx_csr = fpregs->mxcsr;
    out->mx_csr_mask = fpregs->mxcr_mask;
    memcpy(out->float_registers, fpregs->_st, sizeof out->float_registers);
    memcpy(out->xmm_registers, fpregs->_xmm, sizeof out->xmm_registers);
}

/* As Breakpad's UContextReader fills it from a signal's ucontext. */
void minidump_context_from_ucontext(void *out, const ucontext_t *uc, int have_float_state)
{
    struct md_raw_context_amd64 *context = out;
    const greg_t *regs = uc->uc_mcontext.gregs;
    memset(context, 0, sizeof *context);
    context->context_flags = MD_CONTEXT_AMD64_CONTROL | MD_CONTEXT_AMD64_INTEGER;
    context->cs = (uint16_t)(regs[REG_CSGSFS] & 0xffff);
    context->gs = (uint16_t)((regs[REG_CSGSFS] >> 16) & 0xffff);
    context->fs = (uint16_t)((regs[REG_CSGSFS] >> 32) & 0xffff);
    context->eflags = (uint32_t)regs[REG_EFL];
    context->rax = (uint64_t)regs[REG_RAX];
    context->rcx = (uint64_t)regs[REG_RCX];
    context->rdx = (uint64_t)regs[REG_RDX];
    context->rbx = (uint64_t)regs[REG_RBX];
    context->rsp = (uint64_t)regs[REG_RSP];
    context->rbp = (uint64_t)regs[REG_RBP];
    context->rsi = (uint64_t)regs[REG_RSI];
    context->rdi = (uint64_t)regs[REG_RDI];
    context->r8 = (uint64_t)regs[REG_R8];
    context->r9 = (uint64_t)regs[REG_R9];
    context->r10 = (uint64_t)regs[REG_R10];
    context->r11 = (uint64_t)regs[REG_R11];
    context->r12 = (uint64_t)regs[REG_R12];
    context->r13 = (uint64_t)regs[REG_R13];
    context->r14 = (uint64_t)regs[REG_R14];
    context->r15 = (uint64_t)regs[REG_R15];
    context->rip = (uint64_t)regs[REG_RIP];
    if (have_float_state && uc->uc_mcontext.fpregs != NULL) {
        copy_float_state(&context->flt_save, uc->uc_mcontext.fpregs);
        context->mx_csr = uc->uc_mcontext.fpregs->mxcsr;
        context->context_flags |= MD_CONTEXT_AMD64_FLOATING_POINT;
    }
}

void minidump_context_from_stack_pointer(void *out, uintptr_t sp, uintptr_t pc)
{
    struct md_raw_context_amd64 *context = out;
    memset(context, 0, sizeof *context);
    context->context_flags = MD_CONTEXT_AMD64_CONTROL;
    context->rsp = sp;
    context->rip = pc;
}

uintptr_t minidump_ucontext_stack_pointer(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}

uintptr_t minidump_ucontext_pc(const ucontext_t *uc)
{
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

/* Family, model and stepping as /proc/cpuinfo shows them, which is what
 * Breakpad's writer reads: level = family, revision = model << 8 | stepping. */
void minidump_describe_cpu(struct md_raw_system_info *info)
{
    unsigned eax, ebx, ecx, edx;
    info->processor_architecture = MD_CPU_ARCHITECTURE_AMD64;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
        return;
    info->cpu.x86.vendor_id[0] = ebx;
    info->cpu.x86.vendor_id[1] = edx;
    info->cpu.x86.vendor_id[2] = ecx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return;
    unsigned family = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;
    if (family == 0xf)
        family += (eax >> 20) & 0xff;
    if (family == 0x6 || family >= 0xf)
        model += ((eax >> 16) & 0xf) << 4;
    info->processor_level = (uint16_t)family;
    info->processor_revision = (uint16_t)(model << 8 | (eax & 0xf));
    info->cpu.x86.version_information = eax;
    info->cpu.x86.feature_information = edx;
    if (info->cpu.x86.vendor_id[0] == 0x68747541u && /* "AuthenticAMD" */
        __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
        info->cpu.x86.amd_extended_cpu_features = edx;
}
