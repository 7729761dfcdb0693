/* guard_moves_aarch64.h: a SIMD register (ldr/str q0) and a pair of them
 * (ldp/stp), which every AArch64 CPU has. */
#define MOVES_SOURCE "tests/fixtures/guard_access_aarch64.c"

static const struct size_case arch_moves[] = {
    { "q", 16, MOVES_SOURCE, NULL },
    { "pair", 32, MOVES_SOURCE, NULL },
};
