/* internal_demangle.c: the demangler wrapper (src/symbolize/demangle.c)
 * and the index builder over hostile mangled names
 * (tests/fuzz/hostile_mangled.py): a name is demangled as c++filt does,
 * or left mangled, within the bounds of demangle.h, never a crash nor an
 * output past them. */
#define _GNU_SOURCE
#include "symbolize/demangle.h"
#include "symbolize/index.h"
#include "symbolize/module_data.h"
#include "support.h"

#include <gelf.h>
#include <stdio.h>
#include <sys/mman.h>

static void cxxfilt(const char *name, char *out, size_t size)
{
    char command[DEMANGLE_INPUT_MAX + 32];
    snprintf(command, sizeof command, "c++filt '%s'", name);
    FILE *pipe = popen(command, "r");
    cr_assert_not_null(pipe);
    cr_assert_not_null(fgets(out, (int)size, pipe));
    pclose(pipe);
    out[strcspn(out, "\n")] = '\0';
}

Test(demangle, names_as_cxxfilt_writes_them)
{
    static const char *const names[] = {
        "_ZN3app6Parser5parseERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "_ZNSt6vectorIiSaIiEE9push_backERKi",
        "_Z3foov.cold",
        "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", /* Rust legacy */
        "_RNvCs1234_7mycrate3foo",                         /* Rust v0 */
        "_ZZ4mainENKUliE_clEi",                            /* a lambda */
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char ours[DEMANGLE_OUTPUT_MAX + 1], theirs[DEMANGLE_OUTPUT_MAX + 1];
        cr_assert_gt(demangle_name(names[i], ours), 0u, "%s", names[i]);
        cxxfilt(names[i], theirs, sizeof theirs);
        cr_assert_str_eq(ours, theirs, "%s", names[i]);
    }
}

/* demangle.h promises no allocation (libiberty's callback interface):
 * malloc and realloc count while a name is demangled. Not under ASan
 * (make test-asan), whose own malloc must stay the program's. */
#ifndef __SANITIZE_ADDRESS__
static int counting, allocations;
extern void *__libc_malloc(size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
void *malloc(size_t size)
{
    allocations += counting;
    return __libc_malloc(size);
}
void *realloc(void *pointer, size_t size)
{
    allocations += counting;
    return __libc_realloc(pointer, size);
}

Test(demangle, never_allocates)
{
    static const char *const names[] = {
        "_ZN3app6Parser5parseERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
        "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE",
        "_RNvCs1234_7mycrate3foo",
        "_Z1fI1aSt4pairIS0_S0_ES1_IS2_S2_ES1_IS3_S3_ES1_IS4_S4_ES1_IS5_S5_ES1_IS6_S6_ES1_IS7_S7_E"
        "S1_IS8_S8_ES1_IS9_S9_ES1_ISA_SA_EEvv", /* 2^10 pairs: cut by the bound */
    };
    char out[DEMANGLE_OUTPUT_MAX + 1];
    size_t written[4];
    counting = 1;
    for (int i = 0; i < 4; i++)
        written[i] = demangle_name(names[i], out);
    counting = 0;
    cr_assert_eq(allocations, 0);
    cr_assert(written[0] > 0 && written[1] > 0 && written[2] > 0, "demangled");
    cr_assert_eq(written[3], 0u, "longer than the bound");
}
#endif

Test(demangle, leaves_other_names_alone)
{
    char out[DEMANGLE_OUTPUT_MAX + 1];
    cr_assert_eq(demangle_name("main", out), 0u);
    cr_assert_eq(demangle_name("_start", out), 0u);
    cr_assert_eq(demangle_name("_Z", out), 0u);
    cr_assert_eq(demangle_name("_ZN3abc", out), 0u, "malformed");
    cr_assert_eq(demangle_name("", out), 0u);
}

/* The exponential name: 40 levels of pair<S, S> would be 2^40 names long. */
Test(demangle, an_exploding_name_stays_mangled, .timeout = 10)
{
    char name[1024] = "_Z1fI1aSt4pairIS0_S0_E", out[DEMANGLE_OUTPUT_MAX + 1];
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (int level = 0, last = 3; level < 40; level++, last++) {
        char reference[8]; /* S<last - 1 in base 36>_, two digits at most here */
        int n = last - 1;
        if (n < 36)
            snprintf(reference, sizeof reference, "S%c_", digits[n]);
        else
            snprintf(reference, sizeof reference, "S%c%c_", digits[n / 36], digits[n % 36]);
        size_t length = strlen(name);
        snprintf(name + length, sizeof name - length, "S1_I%s%sE", reference, reference);
    }
    strcat(name, "Evv");
    cr_assert_eq(demangle_name(name, out), 0u);
    /* four levels fit: the same shape demangles */
    char small[] = "_Z1fI1aSt4pairIS0_S0_ES1_IS2_S2_ES1_IS3_S3_EEvv";
    cr_assert_gt(demangle_name(small, out), 0u);
    cr_assert(strstr(out, "std::pair<std::pair<a, a>, std::pair<a, a> >") != NULL, "%s", out);
}

/* A Rust v0 name (libiberty refuses Itanium names over 1024 bytes itself,
 * as c++filt does, for its stack): demangled up to the bound, not past. */
Test(demangle, a_name_over_the_input_bound_stays_mangled)
{
    static char name[DEMANGLE_INPUT_MAX + 16], out[DEMANGLE_OUTPUT_MAX + 1];
    /* c++filt: mycrate[3c1c0]::xxx... (the disambiguator 1234, base 62, in hex) */
    static const char prefix[] = "_RNvCs1234_7mycrate";
    for (size_t length = DEMANGLE_INPUT_MAX - 2; length <= DEMANGLE_INPUT_MAX + 2; length++) {
        size_t body = length - strlen(prefix) - 4; /* a four-digit identifier length */
        snprintf(name, sizeof name, "%s%zu", prefix, body);
        memset(name + strlen(name), 'x', body);
        name[length] = '\0';
        cr_assert_eq(strlen(name), length);
        size_t written = demangle_name(name, out);
        if (length <= DEMANGLE_INPUT_MAX)
            cr_assert_eq(written, strlen("mycrate[3c1c0]::") + body, "%zu: %zu", length, written);
        else
            cr_assert_eq(written, 0u, "%zu", length);
    }
}

/* libiberty's own bound on Itanium names (PR 87675): the same as c++filt. */
Test(demangle, an_itanium_name_over_1024_bytes_stays_mangled)
{
    static char name[1100], out[DEMANGLE_OUTPUT_MAX + 1];
    for (size_t body = 1000; body <= 1030; body += 30) {
        /* _Z<four digits><body>v */
        snprintf(name, sizeof name, "_Z%zu", body);
        memset(name + 6, 'x', body);
        strcpy(name + 6 + body, "v");
        size_t written = demangle_name(name, out);
        if (strlen(name) <= 1024)
            cr_assert_eq(written, body + 2, "%zu", strlen(name)); /* xxx...() */
        else
            cr_assert_eq(written, 0u, "%zu", strlen(name));
    }
}

/* The builder over a module of hostile names: every name is stored, the
 * demangled ones within the bound; the exploding and the overlong ones
 * read as their mangled selves. */
Test(demangle, the_index_of_hostile_names_is_bounded, .timeout = 30)
{
    char path[512];
    snprintf(path, sizeof path, "%s/hostile_mangled.so", getenv("EXECINFO_EX_TESTS"));
    struct module_info module;
    memset(&module, 0, sizeof module);
    module.file_path = module.display_path = path;
    module.end = UINTPTR_MAX;
    elf_version(EV_CURRENT);
    size_t line_bytes;
    const struct module_data *data = module_data_build(&module, 0, &line_bytes);
    cr_assert_not_null(data);
    int hostile = 0, demangled = 0;
    for (size_t i = 0; i < data->symbol_count; i++) {
        const char *name = data->strings + data->symbols[i].name;
        const char *readable = data->strings + data->symbols[i].demangled;
        cr_assert_leq(strlen(readable), DEMANGLE_OUTPUT_MAX);
        if (strncmp(name, "_Z1fI1aSt4pair", 14) == 0 || strlen(name) > DEMANGLE_INPUT_MAX) {
            cr_assert_str_eq(readable, name, "left mangled");
            hostile++;
        }
        if (strcmp(readable, name) != 0) {
            char theirs[DEMANGLE_OUTPUT_MAX + 1];
            if (strlen(name) <= DEMANGLE_INPUT_MAX) {
                cxxfilt(name, theirs, sizeof theirs);
                cr_assert_str_eq(readable, theirs);
            }
            demangled++;
        }
    }
    cr_assert_geq(hostile, 4, "the exploding name, the 5000, 3003 and 3000 bytes ones");
    cr_assert_geq(demangled, 3, "the nested one, the Rust legacy and the 2000 bytes v0 ones");
    munmap((void *)data, data->mapped_bytes);
}
