/* execinfo_ex_symbolize: the crash handler's second stage (issue 26).
 * The handler starts it with a raw clone and execve when a report holds
 * frames that the index cannot name or line (a module it did not read);
 * this fresh process, free to allocate, reads each module named in the
 * request with the library's own index builder (module_data.c: libelf,
 * libdw, libiberty, debug files by build-id or .gnu_debuglink) and answers
 * with lookup_frame's names, lines and inlined calls, the same a warm
 * index would give. Request on stdin, answer on stdout (formats:
 * src/fatal/second_stage.c, src/symbolize/resolved_names.h).
 *
 * The answer reads only what its addresses need (answer_filter.h: the
 * symbols the lookup reaches from them, the compilation units that hold
 * them, only those names demangled): libc's whole .symtab, sorted and
 * demangled, was 2.3 ms of a 3.7 ms answer about two of its addresses,
 * this library's every line table 20 ms of a crash in a thread
 * (docs/PERFORMANCE.md). After the answer, with its stdout closed (the
 * handler has what it needs and reaps us after its report), each module
 * is read whole and stored in the index cache (the crashed process's, by
 * its options and environment, keyed by its library's build-id), so that
 * the next crash of the program finds it warm. "--whole" answers from the
 * whole modules, as before (the tests compare the two).
 * World: normal (a program of its own). */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "request.h"
#include "base/environment.h"
#include "symbolize/file_probes.h"
#include "symbolize/answer_filter.h"
#include "symbolize/index.h"
#include "symbolize/index_cache.h"
#include "symbolize/lookup.h"
#include "symbolize/module_data.h"

/* A module's lines may take this much, as line_memory's default. */
#define LINE_BUDGET ((size_t)64 << 20)

/* What the index of the crashed process would read (index.c's line_mode,
 * with lines=own taking every module as the user's). */
static int line_flags(const struct request *request, const struct module_info *module,
                      size_t *budget)
{
    int lines = request->lines == 3 || request->lines == 2 ||
                (request->lines == 1 && module->is_main);
    *budget = lines ? LINE_BUDGET : 0;
    int flags = request->inlines ? LINE_INLINES : 0;
    if (request->lines == 2 && !module->is_main)
        flags |= LINE_OWN_TABLE_ONLY;
    return flags;
}

/* A field of the answer: no tab, line end or other control byte. */
static void put_field(const char *text)
{
    putchar('\t');
    for (; text != NULL && *text != '\0'; text++)
        putchar((unsigned char)*text < 0x20 || *text == 0x7f ? '?' : *text);
}

static void answer_frame(const struct index_snapshot *snapshot, const struct request_address *asked)
{
    struct frame_location location;
    lookup_frame(snapshot, asked->address, asked->naming, 1, &location);
    printf("F\t%lx\t", (unsigned long)asked->naming);
    if (location.function != NULL)
        printf("%lx", (unsigned long)location.function_address);
    put_field(location.function);
    put_field(location.function_demangled);
    put_field(location.file != NULL && location.line != 0 ? location.file : NULL);
    printf("\t%u\n", location.file != NULL ? location.line : 0);
    struct inlined_frame inlined;
    for (unsigned i = 0; location.file != NULL && lookup_inlined(&location, i, &inlined); i++) {
        putchar('I');
        put_field(inlined.function);
        put_field(inlined.file != NULL && inlined.line != 0 ? inlined.file : NULL);
        printf("\t%u\n", inlined.file != NULL ? inlined.line : 0);
    }
}

/* The link-time addresses of MODULE's frames in REQUEST (each frame's
 * own and its naming address: lookup_frame reads both). */
static uint64_t *module_addresses(const struct request *request, size_t m, size_t *count)
{
    uint64_t *addresses = malloc((2 * request->address_count + 1) * sizeof *addresses);
    uintptr_t bias = request->modules[m].info.bias;
    *count = 0;
    for (size_t i = 0; addresses != NULL && i < request->address_count; i++) {
        if (request->addresses[i].module != m)
            continue;
        addresses[(*count)++] = request->addresses[i].address - bias;
        addresses[(*count)++] = request->addresses[i].naming - bias;
    }
    return addresses;
}

/* MODULE read for the answer: what its addresses need, or all (WHOLE,
 * or no memory for the filter). */
static const struct module_data *read_for_answer(const struct request *request, size_t m,
                                                 int whole)
{
    const struct module_info *module = &request->modules[m].info;
    size_t budget, line_bytes, count;
    int flags = line_flags(request, module, &budget);
    struct answer_filter filter;
    uint64_t *addresses = whole ? NULL : module_addresses(request, m, &count);
    int filtered = addresses != NULL && answer_filter_init(&filter, addresses, count) == 0;
    free(addresses);
    const struct module_data *data =
        module_data_build_filtered(module, budget, flags, &line_bytes, NULL, request->demangle,
                                   filtered ? &filter : NULL);
    if (filtered)
        answer_filter_free(&filter);
    return data;
}

static void release(const struct module_data *data)
{
    if (data != NULL && !data->in_shared_mapping)
        munmap((void *)data, data->mapped_bytes);
}

/* Each address of module M of REQUEST answered. */
static void answer_module(const struct request *request, size_t m, int whole)
{
    const struct module_info *module = &request->modules[m].info;
    const struct module_data *data = read_for_answer(request, m, whole);
    struct {
        struct index_snapshot head;
        struct index_module module;
    } one;
    memset(&one, 0, sizeof one);
    one.head.count = 1;
    one.head.modules[0] = (struct index_module){ .bias = module->bias, .start = module->start,
                                                 .end = module->end,
                                                 .path = module->display_path, .data = data };
    for (size_t i = 0; i < request->address_count; i++)
        if (request->addresses[i].module == m)
            answer_frame(&one.head, &request->addresses[i]);
    release(data);
}

/* Module M read whole and stored, unless memory ran out (a part). */
static void store_module(const struct request *request, size_t m)
{
    const struct module_info *module = &request->modules[m].info;
    struct file_probes probes;
    size_t budget, line_bytes;
    int flags = line_flags(request, module, &budget);
    memset(&probes, 0, sizeof probes);
    const struct module_data *data = module_data_build_recorded(
        module, budget, flags, &line_bytes, &probes, request->demangle);
    if (data != NULL && errno != ENOMEM)
        index_cache_store(module, budget, flags, data, line_bytes, &probes);
    file_probes_free(&probes);
    release(data);
}

/* Into the crashed process's index cache: its options (its environment
 * was passed on), its library's build-id. Nothing read when the cache is
 * off (index_cache=0). */
static void store(const struct request *request)
{
    struct module_list list = { NULL, 0, 0, 0 };
    struct index_cache_statistics statistics;
    if (request->builder_length == 0)
        return;
    index_cache_set_builder(request->builder, request->builder_length);
    index_cache_prepare(environment_options(), &list);
    index_cache_statistics(&statistics);
    for (size_t m = 0; statistics.enabled && m < request->module_count; m++)
        store_module(request, m);
    index_cache_finish();
}

int main(int argc, char **argv)
{
    struct request request;
    int whole = argc > 1 && strcmp(argv[1], "--whole") == 0;
    int result = request_read(&request, stdin);
    if (result < 0) {
        fprintf(stderr, "execinfo_ex_symbolize: %s request\n",
                result == -ENOMEM ? "out of memory reading the" : "a malformed");
        return 2;
    }
    elf_version(EV_CURRENT);
    for (size_t m = 0; m < request.module_count; m++)
        answer_module(&request, m, whole);
    printf("end\n");
    int answered = fflush(stdout) == 0;
    fclose(stdout); /* the handler reads to here; the store is ours */
    store(&request);
    request_free(&request);
    return answered ? 0 : 1;
}
