#!/usr/bin/env python3
"""Write a C file whose functions have hostile mangled names (asm labels),
for fuzz_elf_index's seeds and the demangling tests: a name that expands
exponentially (each std::pair<S, S> of the one before doubles the output:
350 bytes give terabytes), Itanium names over libiberty's own bound (1024
bytes) and over ours (src/symbolize/demangle.h), Rust v0 names just
under and over ours, deep nesting, a Rust v0 name with a back-reference
loop, a malformed one, and a Rust legacy name.
Usage: hostile_mangled.py OUT.c"""
import sys


def base36(n):
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    while True:
        text = digits[n % 36] + text
        n //= 36
        if n == 0:
            return text


def substitution(i):
    return "S_" if i == 0 else "S%s_" % base36(i - 1)


def exponential(levels):
    # f<a, pair<a,a>, pair<pair<a,a>,pair<a,a>>, ...>(): S0_ is a, S1_ is
    # std::pair, S2_ the first pair<a, a>, each level a new substitution.
    name, last = "_Z1fI1aSt4pairIS0_S0_E", 3
    for _ in range(levels):
        name += "S1_I%s%sE" % (substitution(last), substitution(last))
        last += 1
    return name + "Evv"


def nested(components):
    return "_ZN" + "".join("%d%s" % (len("n%dx" % i), "n%dx" % i) for i in range(components)) + "Ev"


def sized(length):
    # _Z + <source-name> of the length wanted + v
    body = length - 3 - len(str(length))
    return "_Z%d%sv" % (body, "x" * body)


def rust_sized(length):
    # _RNvCs1234_7mycrate + <identifier> (a four-digit length)
    body = length - 23
    return "_RNvCs1234_7mycrate%d%s" % (body, "x" * body)


names = [
    exponential(40),
    nested(120),
    sized(2000),
    sized(5000),
    rust_sized(2000),
    rust_sized(3000),
    "_Z" + "P" * 3000 + "v",
    "_RNvB0_1a",
    "_ZN" + "N" * 500,
    "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE",
]
with open(sys.argv[1], "w") as out:
    for i, name in enumerate(names):
        out.write('int hostile_%d(int x) __asm__("%s");\n' % (i, name))
        out.write("int hostile_%d(int x) { return x + %d; }\n" % (i, i))
