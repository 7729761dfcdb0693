/* guard_moves.h: the architecture's vector moves that
 * tests/unit/test_guard_pages.c tries against a guard page, as
 * tests/fixtures/guard_access_ARCH.c names them: arch_moves[], one
 * struct size_case each, in one file per architecture. */
#ifndef GUARD_MOVES_H
#define GUARD_MOVES_H

#if defined(__x86_64__)
#include "guard_moves_x86_64.h"
#elif defined(__aarch64__)
#include "guard_moves_aarch64.h"
#else
#error "tests: x86_64 and aarch64 only; add guard_moves_ARCH.h"
#endif

#endif
