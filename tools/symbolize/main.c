/* execinfo_ex_symbolize: the crash handler's second stage (issue 26).
 * The handler starts it with a raw clone and execve when a report holds
 * frames that the index cannot name or line (a module it did not read);
 * this fresh process, free to allocate, reads each module named in the
 * request with the library's own index builder (module_data_build: libelf,
 * libdw, libiberty, debug files by build-id or .gnu_debuglink) and answers
 * with lookup_frame's names, lines and inlined calls, the same a warm
 * index would give. Request on stdin, answer on stdout (formats:
 * src/fatal/second_stage.c, src/symbolize/resolved_names.h). After the
 * answer, what it read is stored in the index cache (the crashed
 * process's, by its options and environment, keyed by its library's
 * build-id), so that the next crash of the program finds it warm.
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

/* What was read of a module, kept for the cache after the answer. */
struct read_module {
    const struct module_data *data;
    size_t budget, line_bytes;
    int flags, complete;
    struct file_probes probes;
};

/* Module M of REQUEST read into *READ, and each of its addresses answered. */
static void answer_module(const struct request *request, size_t m, struct read_module *read)
{
    const struct module_info *module = &request->modules[m].info;
    read->flags = line_flags(request, module, &read->budget);
    const struct module_data *data =
        module_data_build_recorded(module, read->budget, read->flags, &read->line_bytes,
                                   &read->probes, request->demangle);
    read->complete = errno != ENOMEM;
    read->data = data;
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
}

/* Into the crashed process's index cache: its options (its environment
 * was passed on), its library's build-id; the modules read whole. */
static void store(const struct request *request, struct read_module *read)
{
    struct module_list list = { NULL, 0, 0, 0 };
    if (request->builder_length == 0)
        return;
    index_cache_set_builder(request->builder, request->builder_length);
    index_cache_prepare(environment_options(), &list);
    for (size_t m = 0; m < request->module_count; m++)
        if (read[m].data != NULL && read[m].complete)
            index_cache_store(&request->modules[m].info, read[m].budget, read[m].flags,
                              read[m].data, read[m].line_bytes, &read[m].probes);
    index_cache_finish();
}

int main(void)
{
    struct request request;
    int result = request_read(&request, stdin);
    if (result < 0) {
        fprintf(stderr, "execinfo_ex_symbolize: %s request\n",
                result == -ENOMEM ? "out of memory reading the" : "a malformed");
        return 2;
    }
    elf_version(EV_CURRENT);
    struct read_module *read = calloc(request.module_count + 1, sizeof *read);
    if (read == NULL)
        return 2;
    for (size_t m = 0; m < request.module_count; m++)
        answer_module(&request, m, &read[m]);
    printf("end\n");
    int answered = fflush(stdout) == 0;
    fclose(stdout); /* the handler reads to here; the store is ours */
    store(&request, read);
    for (size_t m = 0; m < request.module_count; m++) {
        file_probes_free(&read[m].probes);
        if (read[m].data != NULL && !read[m].data->in_shared_mapping)
            munmap((void *)read[m].data, read[m].data->mapped_bytes);
    }
    free(read);
    request_free(&request);
    return answered ? 0 : 1;
}
