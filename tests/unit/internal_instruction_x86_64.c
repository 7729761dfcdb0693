/* The x86-64 instruction walker's access sizes. Each row's bytes were
 * checked with `objdump -D -b binary -mi386:x86-64` (the mnemonic is the
 * comment, tests/tools/check_instruction_table.py repeats the check) and
 * each size written by hand from that mnemonic and the Intel SDM's
 * operand column, not from the decoder's output. */
#define _GNU_SOURCE
#include "fatal/fault_access.h"
#include "fatal/instruction_x86_64.h"
#include "support.h"

#include <stdint.h>

struct row {
    const char *mnemonic;       /* objdump's, for the failure message */
    unsigned length;
    uint8_t code[16];
    unsigned size;              /* bytes one access moves, 0: no memory access */
};

#define M8 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 /* an 8-byte moffs */

static const struct row rows[] = {
    /* mov, by operand size: byte opcode, 0x66, none, REX.W */
    { "mov BYTE PTR [rdi],al", 2, { 0x88, 0x07 }, 1 },
    { "mov WORD PTR [rdi],ax", 3, { 0x66, 0x89, 0x07 }, 2 },
    { "mov DWORD PTR [rdi],eax", 2, { 0x89, 0x07 }, 4 },
    { "mov QWORD PTR [rdi],rax", 3, { 0x48, 0x89, 0x07 }, 8 },
    { "mov al,BYTE PTR [rdi]", 2, { 0x8a, 0x07 }, 1 },
    { "mov ax,WORD PTR [rdi]", 3, { 0x66, 0x8b, 0x07 }, 2 },
    { "mov eax,DWORD PTR [rdi]", 2, { 0x8b, 0x07 }, 4 },
    { "mov rax,QWORD PTR [rdi]", 3, { 0x48, 0x8b, 0x07 }, 8 },
    { "mov r8,QWORD PTR [rdi+0x8]", 4, { 0x4c, 0x8b, 0x47, 0x08 }, 8 },
    { "mov eax,DWORD PTR [rsp]", 3, { 0x8b, 0x04, 0x24 }, 4 },
    { "mov rax,QWORD PTR [rdi+rcx*4+0x10]", 5, { 0x48, 0x8b, 0x44, 0x8f, 0x10 }, 8 },
    { "mov eax,DWORD PTR [edi]", 3, { 0x67, 0x8b, 0x07 }, 4 },
    { "mov rax,QWORD PTR [rip+0x0] # 0x7", 7, { 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 8 },
    { "mov rax,QWORD PTR fs:0x28", 9, { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 8 },
    { "mov BYTE PTR [rdi],0x1", 3, { 0xc6, 0x07, 0x01 }, 1 },
    { "mov WORD PTR [rdi],0x1", 5, { 0x66, 0xc7, 0x07, 0x01, 0x00 }, 2 },
    { "mov DWORD PTR [rdi],0x1", 6, { 0xc7, 0x07, 0x01, 0, 0, 0 }, 4 },
    { "mov QWORD PTR [rdi],0x1", 7, { 0x48, 0xc7, 0x07, 0x01, 0, 0, 0 }, 8 },
    /* movzx, movsx, movsxd: the source's size */
    { "movzx eax,BYTE PTR [rdi]", 3, { 0x0f, 0xb6, 0x07 }, 1 },
    { "movzx eax,WORD PTR [rdi]", 3, { 0x0f, 0xb7, 0x07 }, 2 },
    { "movsx rax,BYTE PTR [rdi]", 4, { 0x48, 0x0f, 0xbe, 0x07 }, 1 },
    { "movsx rax,WORD PTR [rdi]", 4, { 0x48, 0x0f, 0xbf, 0x07 }, 2 },
    { "movsxd rax,DWORD PTR [rdi]", 3, { 0x48, 0x63, 0x07 }, 4 },
    /* arithmetic, read-modify-write and not */
    { "add BYTE PTR [rdi],al", 2, { 0x00, 0x07 }, 1 },
    { "add WORD PTR [rdi],ax", 3, { 0x66, 0x01, 0x07 }, 2 },
    { "add DWORD PTR [rdi],eax", 2, { 0x01, 0x07 }, 4 },
    { "add QWORD PTR [rdi],rax", 3, { 0x48, 0x01, 0x07 }, 8 },
    { "add eax,DWORD PTR [rdi]", 2, { 0x03, 0x07 }, 4 },
    { "add BYTE PTR [rdi],0x1", 3, { 0x80, 0x07, 0x01 }, 1 },
    { "add DWORD PTR [rdi],0x1", 3, { 0x83, 0x07, 0x01 }, 4 },
    { "add QWORD PTR [rdi],0x1", 4, { 0x48, 0x83, 0x07, 0x01 }, 8 },
    { "add DWORD PTR [rdi],0x100", 6, { 0x81, 0x07, 0x00, 0x01, 0, 0 }, 4 },
    { "inc QWORD PTR [rdi]", 3, { 0x48, 0xff, 0x07 }, 8 },
    { "inc BYTE PTR [rdi]", 2, { 0xfe, 0x07 }, 1 },
    { "test BYTE PTR [rdi],0x1", 3, { 0xf6, 0x07, 0x01 }, 1 },
    { "not QWORD PTR [rdi]", 3, { 0x48, 0xf7, 0x17 }, 8 },
    { "test QWORD PTR [rdi],rax", 3, { 0x48, 0x85, 0x07 }, 8 },
    { "test BYTE PTR [rdi],al", 2, { 0x84, 0x07 }, 1 },
    { "cmp QWORD PTR [rdi],rax", 3, { 0x48, 0x39, 0x07 }, 8 },
    { "cmp al,BYTE PTR [rdi]", 2, { 0x3a, 0x07 }, 1 },
    { "xchg DWORD PTR [rdi],eax", 2, { 0x87, 0x07 }, 4 },
    { "lock cmpxchg QWORD PTR [rdi],rdx", 5, { 0xf0, 0x48, 0x0f, 0xb1, 0x17 }, 8 },
    { "lock xadd DWORD PTR [rdi],eax", 4, { 0xf0, 0x0f, 0xc1, 0x07 }, 4 },
    { "lock cmpxchg16b OWORD PTR [rdi]", 5, { 0xf0, 0x48, 0x0f, 0xc7, 0x0f }, 16 },
    { "lock cmpxchg8b QWORD PTR [rdi]", 4, { 0xf0, 0x0f, 0xc7, 0x0f }, 8 },
    { "shl DWORD PTR [rdi],1", 2, { 0xd1, 0x27 }, 4 },
    { "shl QWORD PTR [rdi],0x3", 4, { 0x48, 0xc1, 0x27, 0x03 }, 8 },
    { "shl BYTE PTR [rdi],1", 2, { 0xd0, 0x27 }, 1 },
    { "imul rax,QWORD PTR [rdi]", 4, { 0x48, 0x0f, 0xaf, 0x07 }, 8 },
    { "imul eax,DWORD PTR [rdi],0x3", 3, { 0x6b, 0x07, 0x03 }, 4 },
    { "cmove eax,DWORD PTR [rdi]", 3, { 0x0f, 0x44, 0x07 }, 4 },
    { "sete BYTE PTR [rdi]", 3, { 0x0f, 0x94, 0x07 }, 1 },
    { "bt QWORD PTR [rdi],rax", 4, { 0x48, 0x0f, 0xa3, 0x07 }, 8 },
    { "movnti DWORD PTR [rdi],eax", 3, { 0x0f, 0xc3, 0x07 }, 4 },
    { "movnti QWORD PTR [rdi],rax", 4, { 0x48, 0x0f, 0xc3, 0x07 }, 8 },
    { "popcnt rax,QWORD PTR [rdi]", 5, { 0xf3, 0x48, 0x0f, 0xb8, 0x07 }, 8 },
    /* the stack and control transfers through memory */
    { "call QWORD PTR [rdi]", 2, { 0xff, 0x17 }, 8 },
    { "jmp QWORD PTR [rdi]", 2, { 0xff, 0x27 }, 8 },
    { "push QWORD PTR [rdi]", 2, { 0xff, 0x37 }, 8 },
    { "pop QWORD PTR [rdi]", 2, { 0x8f, 0x07 }, 8 },
    { "push rax", 1, { 0x50 }, 8 },
    { "pop rax", 1, { 0x58 }, 8 },
    { "call 0x5", 5, { 0xe8, 0, 0, 0, 0 }, 8 },
    { "ret", 1, { 0xc3 }, 8 },
    { "push 0x1", 2, { 0x6a, 0x01 }, 8 },
    /* string instructions: one element */
    { "movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]", 1, { 0xa4 }, 1 },
    { "rep movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]", 2, { 0xf3, 0xa4 }, 1 },
    { "rep movs QWORD PTR es:[rdi],QWORD PTR ds:[rsi]", 3, { 0xf3, 0x48, 0xa5 }, 8 },
    { "rep movs DWORD PTR es:[rdi],DWORD PTR ds:[rsi]", 2, { 0xf3, 0xa5 }, 4 },
    { "rep movs WORD PTR es:[rdi],WORD PTR ds:[rsi]", 3, { 0x66, 0xf3, 0xa5 }, 2 },
    { "rep stos BYTE PTR es:[rdi],al", 2, { 0xf3, 0xaa }, 1 },
    { "rep stos QWORD PTR es:[rdi],rax", 3, { 0xf3, 0x48, 0xab }, 8 },
    { "lods al,BYTE PTR ds:[rsi]", 1, { 0xac }, 1 },
    { "lods rax,QWORD PTR ds:[rsi]", 2, { 0x48, 0xad }, 8 },
    { "repz cmps BYTE PTR ds:[rsi],BYTE PTR es:[rdi]", 2, { 0xf3, 0xa6 }, 1 },
    { "scas al,BYTE PTR es:[rdi]", 1, { 0xae }, 1 },
    { "xlat BYTE PTR ds:[rbx]", 1, { 0xd7 }, 1 },
    { "movabs al,ds:0x1122334455667788", 9, { 0xa0, M8 }, 1 },
    { "movabs rax,ds:0x1122334455667788", 10, { 0x48, 0xa1, M8 }, 8 },
    /* x87 */
    { "fld DWORD PTR [rdi]", 2, { 0xd9, 0x07 }, 4 },
    { "fld QWORD PTR [rdi]", 2, { 0xdd, 0x07 }, 8 },
    { "fld TBYTE PTR [rdi]", 2, { 0xdb, 0x2f }, 10 },
    { "fstp QWORD PTR [rdi]", 2, { 0xdd, 0x1f }, 8 },
    { "fild QWORD PTR [rdi]", 2, { 0xdf, 0x2f }, 8 },
    { "fnstcw WORD PTR [rdi]", 2, { 0xd9, 0x3f }, 2 },
    { "fiadd WORD PTR [rdi]", 2, { 0xde, 0x07 }, 2 },
    /* SSE and MMX */
    { "movups xmm0,XMMWORD PTR [rdi]", 3, { 0x0f, 0x10, 0x07 }, 16 },
    { "movups XMMWORD PTR [rdi],xmm0", 3, { 0x0f, 0x11, 0x07 }, 16 },
    { "movdqa xmm0,XMMWORD PTR [rdi]", 4, { 0x66, 0x0f, 0x6f, 0x07 }, 16 },
    { "movdqu xmm0,XMMWORD PTR [rdi]", 4, { 0xf3, 0x0f, 0x6f, 0x07 }, 16 },
    { "movdqa XMMWORD PTR [rdi],xmm0", 4, { 0x66, 0x0f, 0x7f, 0x07 }, 16 },
    { "movss xmm0,DWORD PTR [rdi]", 4, { 0xf3, 0x0f, 0x10, 0x07 }, 4 },
    { "movsd xmm0,QWORD PTR [rdi]", 4, { 0xf2, 0x0f, 0x10, 0x07 }, 8 },
    { "movsd QWORD PTR [rdi],xmm0", 4, { 0xf2, 0x0f, 0x11, 0x07 }, 8 },
    { "movaps xmm0,XMMWORD PTR [rdi]", 3, { 0x0f, 0x28, 0x07 }, 16 },
    { "movapd xmm0,XMMWORD PTR [rdi]", 4, { 0x66, 0x0f, 0x28, 0x07 }, 16 },
    { "movq mm0,QWORD PTR [rdi]", 3, { 0x0f, 0x6f, 0x07 }, 8 },
    { "movd xmm0,DWORD PTR [rdi]", 4, { 0x66, 0x0f, 0x6e, 0x07 }, 4 },
    { "movq xmm0,QWORD PTR [rdi]", 5, { 0x66, 0x48, 0x0f, 0x6e, 0x07 }, 8 },
    { "movq xmm0,QWORD PTR [rdi]", 4, { 0xf3, 0x0f, 0x7e, 0x07 }, 8 },
    { "movq QWORD PTR [rdi],xmm0", 4, { 0x66, 0x0f, 0xd6, 0x07 }, 8 },
    { "movlps xmm0,QWORD PTR [rdi]", 3, { 0x0f, 0x12, 0x07 }, 8 },
    { "movhpd xmm0,QWORD PTR [rdi]", 4, { 0x66, 0x0f, 0x16, 0x07 }, 8 },
    { "addsd xmm0,QWORD PTR [rdi]", 4, { 0xf2, 0x0f, 0x58, 0x07 }, 8 },
    { "addss xmm0,DWORD PTR [rdi]", 4, { 0xf3, 0x0f, 0x58, 0x07 }, 4 },
    { "addps xmm0,XMMWORD PTR [rdi]", 3, { 0x0f, 0x58, 0x07 }, 16 },
    { "paddd xmm0,XMMWORD PTR [rdi]", 4, { 0x66, 0x0f, 0xfe, 0x07 }, 16 },
    { "paddd mm0,QWORD PTR [rdi]", 3, { 0x0f, 0xfe, 0x07 }, 8 },
    { "punpckldq mm0,DWORD PTR [rdi]", 3, { 0x0f, 0x62, 0x07 }, 4 },
    { "ucomisd xmm0,QWORD PTR [rdi]", 4, { 0x66, 0x0f, 0x2e, 0x07 }, 8 },
    { "ucomiss xmm0,DWORD PTR [rdi]", 3, { 0x0f, 0x2e, 0x07 }, 4 },
    { "cvtsi2sd xmm0,DWORD PTR [rdi]", 4, { 0xf2, 0x0f, 0x2a, 0x07 }, 4 },
    { "cvtsi2sd xmm0,QWORD PTR [rdi]", 5, { 0xf2, 0x48, 0x0f, 0x2a, 0x07 }, 8 },
    { "cvtss2sd xmm0,DWORD PTR [rdi]", 4, { 0xf3, 0x0f, 0x5a, 0x07 }, 4 },
    { "cvtps2pd xmm0,QWORD PTR [rdi]", 3, { 0x0f, 0x5a, 0x07 }, 8 },
    { "movntdq XMMWORD PTR [rdi],xmm0", 4, { 0x66, 0x0f, 0xe7, 0x07 }, 16 },
    { "pshufb xmm0,XMMWORD PTR [rdi]", 5, { 0x66, 0x0f, 0x38, 0x00, 0x07 }, 16 },
    { "pmovzxbw xmm0,QWORD PTR [rdi]", 5, { 0x66, 0x0f, 0x38, 0x30, 0x07 }, 8 },
    { "pmovzxbd xmm0,DWORD PTR [rdi]", 5, { 0x66, 0x0f, 0x38, 0x31, 0x07 }, 4 },
    { "pmovzxbq xmm0,WORD PTR [rdi]", 5, { 0x66, 0x0f, 0x38, 0x32, 0x07 }, 2 },
    { "pextrd DWORD PTR [rdi],xmm0,0x0", 6, { 0x66, 0x0f, 0x3a, 0x16, 0x07, 0x00 }, 4 },
    { "pextrb BYTE PTR [rdi],xmm0,0x0", 6, { 0x66, 0x0f, 0x3a, 0x14, 0x07, 0x00 }, 1 },
    { "pinsrb xmm0,BYTE PTR [rdi],0x0", 6, { 0x66, 0x0f, 0x3a, 0x20, 0x07, 0x00 }, 1 },
    { "pinsrw xmm0,WORD PTR [rdi],0x0", 5, { 0x66, 0x0f, 0xc4, 0x07, 0x00 }, 2 },
    { "ldmxcsr DWORD PTR [rdi]", 3, { 0x0f, 0xae, 0x17 }, 4 },
    /* AVX: VEX.L, scalar forms, broadcasts, 128-bit lanes */
    { "vmovups xmm0,XMMWORD PTR [rdi]", 4, { 0xc5, 0xf8, 0x10, 0x07 }, 16 },
    { "vmovups ymm0,YMMWORD PTR [rdi]", 4, { 0xc5, 0xfc, 0x10, 0x07 }, 32 },
    { "vmovups YMMWORD PTR [rdi],ymm0", 4, { 0xc5, 0xfc, 0x11, 0x07 }, 32 },
    { "vmovdqu ymm0,YMMWORD PTR [rdi]", 4, { 0xc5, 0xfe, 0x6f, 0x07 }, 32 },
    { "vmovss xmm0,DWORD PTR [rdi]", 4, { 0xc5, 0xfa, 0x10, 0x07 }, 4 },
    { "vmovsd xmm0,QWORD PTR [rdi]", 4, { 0xc5, 0xfb, 0x10, 0x07 }, 8 },
    { "vbroadcastss ymm0,DWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0x7d, 0x18, 0x07 }, 4 },
    { "vbroadcastsd ymm0,QWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0x7d, 0x19, 0x07 }, 8 },
    { "vbroadcasti128 ymm0,XMMWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0x7d, 0x5a, 0x07 }, 16 },
    { "vextractf128 XMMWORD PTR [rdi],ymm0,0x0", 6, { 0xc4, 0xe3, 0x7d, 0x19, 0x07, 0x00 }, 16 },
    { "vpmovzxbw ymm0,XMMWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0x7d, 0x30, 0x07 }, 16 },
    { "vmovups ymm0,YMMWORD PTR [r8]", 5, { 0xc4, 0xc1, 0x7c, 0x10, 0x00 }, 32 },
    { "vpaddd ymm0,ymm0,YMMWORD PTR [rdi]", 4, { 0xc5, 0xfd, 0xfe, 0x07 }, 32 },
    { "vmovq xmm0,QWORD PTR [rdi]", 5, { 0xc4, 0xe1, 0xf9, 0x6e, 0x07 }, 8 },
    { "vmovd xmm0,DWORD PTR [rdi]", 4, { 0xc5, 0xf9, 0x6e, 0x07 }, 4 },
    { "vfmadd213sd xmm0,xmm1,QWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0xf1, 0xa9, 0x07 }, 8 },
    { "vfmadd213ss xmm0,xmm1,DWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0x71, 0xa9, 0x07 }, 4 },
    { "vfmadd213pd ymm0,ymm1,YMMWORD PTR [rdi]", 5, { 0xc4, 0xe2, 0xf5, 0xa8, 0x07 }, 32 },
    { "vfmaddsd xmm0,xmm1,xmm2,QWORD PTR [rdi]", 6, { 0xc4, 0xe3, 0xf1, 0x6b, 0x07, 0x20 }, 8 },
    { "vldmxcsr DWORD PTR [rdi]", 4, { 0xc5, 0xf8, 0xae, 0x17 }, 4 },
    /* AVX-512: EVEX.L'L and embedded broadcast */
    { "vmovups zmm0,ZMMWORD PTR [rdi]", 6, { 0x62, 0xf1, 0x7c, 0x48, 0x10, 0x07 }, 64 },
    { "{evex} vmovups ymm0,YMMWORD PTR [rdi]", 6, { 0x62, 0xf1, 0x7c, 0x28, 0x10, 0x07 }, 32 },
    { "vmovdqu64 zmm0,ZMMWORD PTR [rdi]", 6, { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x07 }, 64 },
    { "vbroadcastss zmm0,DWORD PTR [rdi]", 6, { 0x62, 0xf2, 0x7d, 0x48, 0x18, 0x07 }, 4 },
    { "vaddps zmm0,zmm0,DWORD BCST [rdi]", 6, { 0x62, 0xf1, 0x7c, 0x58, 0x58, 0x07 }, 4 },
    { "vaddpd zmm0,zmm0,QWORD BCST [rdi]", 6, { 0x62, 0xf1, 0xfd, 0x58, 0x58, 0x07 }, 8 },
    /* no memory access */
    { "lea rax,[rdi]", 3, { 0x48, 0x8d, 0x07 }, 0 },
    { "mov rdi,rax", 3, { 0x48, 0x89, 0xc7 }, 0 },
    { "ud2", 2, { 0x0f, 0x0b }, 0 },
    { "nop", 1, { 0x90 }, 0 },
    { "vzeroupper", 3, { 0xc5, 0xf8, 0x77 }, 0 },
};

Test(instruction_x86_64, each_access_has_the_size_of_its_operand)
{
    size_t count = sizeof rows / sizeof rows[0];
    cr_assert_geq(count, 100);
    for (size_t i = 0; i < count; i++) {
        unsigned size = fault_access_arch_size(rows[i].code, rows[i].length);
        cr_expect_eq(size, rows[i].size, "%s: %u, expected %u", rows[i].mnemonic, size,
                     rows[i].size);
    }
}

/* Near the end of a mapping fewer bytes are read: what is cut is unknown. */
Test(instruction_x86_64, a_cut_instruction_has_no_size)
{
    static const uint8_t cut[][4] = { { 0x48, 0x8b }, { 0x0f }, { 0xc5, 0xfc }, { 0x66 } };
    static const unsigned lengths[] = { 2, 1, 2, 1 };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        cr_expect_eq(fault_access_arch_size(cut[i], lengths[i]), 0, "cut %zu", i);
}

/* The walker's address for the hints is unchanged where it was known, and
 * a fs: base or a rip-relative operand gives a size without an address. */
Test(instruction_x86_64, the_address_is_known_only_from_the_registers)
{
    struct x86_instruction decoded;
    static const uint8_t indexed[] = { 0x48, 0x8b, 0x44, 0x8f, 0x10 };
    cr_assert(x86_instruction_decode(indexed, sizeof indexed, &decoded));
    cr_expect(decoded.address_known && decoded.base == X86_RDI && decoded.index == 1 &&
              decoded.scale == 4 && decoded.displacement == 0x10);
    static const uint8_t fs[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 };
    cr_assert(x86_instruction_decode(fs, sizeof fs, &decoded));
    cr_expect(!decoded.address_known && decoded.size == 8);
    static const uint8_t rip[] = { 0x48, 0x8b, 0x05, 0, 0, 0, 0 };
    cr_assert(x86_instruction_decode(rip, sizeof rip, &decoded));
    cr_expect(!decoded.address_known && decoded.size == 8);
    /* vmovups zmm0,[rdi+0x40] and vaddps zmm0,zmm0,[rdi+0x8]{1to16}: the
     * EVEX disp8 01 and 02 scaled by N, 64 and 4 (SDM 2.7.5). */
    static const uint8_t evex_full[] = { 0x62, 0xf1, 0x7c, 0x48, 0x10, 0x47, 0x01 };
    cr_assert(x86_instruction_decode(evex_full, sizeof evex_full, &decoded));
    cr_expect(decoded.address_known && decoded.base == X86_RDI && decoded.displacement == 0x40);
    static const uint8_t evex_broadcast[] = { 0x62, 0xf1, 0x7c, 0x58, 0x58, 0x47, 0x02 };
    cr_assert(x86_instruction_decode(evex_broadcast, sizeof evex_broadcast, &decoded));
    cr_expect(decoded.address_known && decoded.displacement == 0x8);
    static const uint8_t string[] = { 0xf3, 0x48, 0xa5 };
    cr_assert(x86_instruction_decode(string, sizeof string, &decoded));
    cr_expect(decoded.address_known && decoded.string_pair && decoded.base == X86_RSI);
}
