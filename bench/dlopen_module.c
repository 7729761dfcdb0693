/* dlopen_module.c: the small module that bench/dlopen_bench.c opens 200
 * copies of (one build, copied: each copy is a separate file, loaded and
 * indexed on its own). 64 functions, a few static, with -g as a user's. */
#define FUNCTION(n)                                                        \
    __attribute__((noinline)) static int helper_##n(int x) { return x * n + 1; } \
    __attribute__((noinline)) int module_function_##n(int x) { return helper_##n(x) ^ n; }
#define EIGHT(a) FUNCTION(a##0) FUNCTION(a##1) FUNCTION(a##2) FUNCTION(a##3) \
    FUNCTION(a##4) FUNCTION(a##5) FUNCTION(a##6) FUNCTION(a##7)
EIGHT(1) EIGHT(2) EIGHT(3) EIGHT(4)
