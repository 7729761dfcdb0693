/* guard_moves_x86_64.h: SSE (movdqu to read, movups to write), AVX
 * (vmovdqu) and AVX-512 (vmovdqu64), each tried where the CPU has it. */
#define MOVES_SOURCE "tests/fixtures/guard_access_x86_64.c"

static int has_avx(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

static int has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

static const struct size_case arch_moves[] = {
    { "sse", 16, MOVES_SOURCE, NULL },
    { "avx", 32, MOVES_SOURCE, has_avx },
    { "avx512", 64, MOVES_SOURCE, has_avx512 },
};
