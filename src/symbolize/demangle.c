/* demangle.c: C++ and Rust names demangled by libiberty, as c++filt does.
 * World: normal (called by the index builder, module_data.c; it never
 * allocates, but it runs libiberty's code, which the signal-safe world
 * must not).
 *
 * Why libiberty and not libstdc++'s __cxa_demangle: libiberty is a C
 * library, linked statically (Debian's libiberty.a is built -fPIC and
 * goes into the shared library, hidden by the version script), so a C
 * program does not gain a C++ runtime; it has Rust's legacy and v0
 * demanglers beside the Itanium one; and its callback interface writes
 * the output in pieces to us. __cxa_demangle grows a malloc'd buffer to
 * whatever the name expands to: substitutions let 350 bytes of a hostile
 * name expand to terabytes (each "pair<S_, S_>" doubles the output), in
 * exponential time. Here the callback counts what was written, and past
 * DEMANGLE_OUTPUT_MAX it leaves the demangler with longjmp: the callback
 * interface keeps its state on the stack only, so leaving drops nothing. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <setjmp.h>
#include <string.h>

/* c++filt's flags: parameters, const/volatile, and the standard
 * substitutions written in full (DMGL_VERBOSE), as its output is the
 * reference users compare with. */
#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE)

struct bounded_output {
    char *text;
    size_t length;
    jmp_buf too_long;
};

static void append_piece(const char *piece, size_t length, void *opaque)
{
    struct bounded_output *out = opaque;
    if (length > DEMANGLE_OUTPUT_MAX - out->length)
        longjmp(out->too_long, 1);
    memcpy(out->text + out->length, piece, length);
    out->length += length;
}

static int looks_mangled(const char *name)
{
    return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Whether libiberty's Rust demangler could take NAME: a v0 name (_R), or
 * a legacy one, which ends in a hash element "17h" and 16 hex digits. It
 * scans the whole name before it looks for the hash, 10% of demangling a
 * C++ program's names, all of which it refuses. */
static int may_be_rust(const char *name)
{
    return name[1] == 'R' || (name[2] == 'N' && strstr(name, "17h") != NULL);
}

/* Rust first, as c++filt's automatic style: a legacy Rust name is also
 * a valid Itanium name, which would keep its hash as a path element. */
static int demangle_into(const char *name, struct bounded_output *out)
{
    if (may_be_rust(name) && rust_demangle_callback(name, DEMANGLE_FLAGS, append_piece, out))
        return 1;
    out->length = 0;
    return cplus_demangle_v3_callback(name, DEMANGLE_FLAGS, append_piece, out);
}

size_t demangle_name(const char *name, char *to)
{
    struct bounded_output out = { .text = to, .length = 0 };
    if (!looks_mangled(name) || strnlen(name, DEMANGLE_INPUT_MAX + 1) > DEMANGLE_INPUT_MAX)
        return 0;
    if (setjmp(out.too_long) != 0)
        return 0;
    if (!demangle_into(name, &out) || out.length == 0)
        return 0;
    to[out.length] = '\0';
    return out.length;
}
