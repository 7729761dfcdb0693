/* handler_tiny.c: one of the ten tiny shared libraries that
 * handler_load_helper links, for part 7b (install time in a program of
 * ten libraries). Built ten times, -DTINY=1 ... -DTINY=10, into
 * build/bench/libhandler_tiny1.so ... libhandler_tiny10.so. Each has one
 * exported and one static function, and a constructor that stamps the
 * time it ran in handler_tinyN_init_ns: the loader runs a program's
 * constructors one library at a time, so the stamps of the libraries
 * initialised just before and just after ours bracket our constructor
 * (see handler_load_helper.c). */
#include "timing.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define NAME CAT(handler_tiny, TINY)

int NAME(int value);
extern uint64_t CAT(NAME, _init_ns);
uint64_t CAT(NAME, _init_ns);

__attribute__((constructor)) static void stamp(void)
{
    CAT(NAME, _init_ns) = now_ns();
}

__attribute__((noinline)) static int scale(int value)
{
    return value * 3 + TINY;
}

int NAME(int value)
{
    return scale(value) ^ TINY;
}
