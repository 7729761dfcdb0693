/* request.c: parse the crash handler's request (request.h).
 * World: normal (stdio, malloc). */
#define _GNU_SOURCE
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array_grow.h"

#define FIELDS_MAX 8

static int split(char *line, char *fields[FIELDS_MAX])
{
    int count = 0;
    char *at = line;
    fields[count++] = at;
    while ((at = strchr(at, '\t')) != NULL) {
        if (count == FIELDS_MAX)
            return -1;
        *at++ = '\0';
        fields[count++] = at;
    }
    return count;
}

static int hex(const char *text, uintptr_t *out)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 16);
    if (*text == '\0' || *end != '\0' || errno != 0)
        return -1;
    *out = (uintptr_t)value;
    return 0;
}

static unsigned build_id(const char *text, unsigned char id[MODULE_BUILD_ID_MAX])
{
    size_t length = strlen(text);
    if (length % 2 != 0 || length / 2 > MODULE_BUILD_ID_MAX)
        return 0;
    for (size_t i = 0; i < length / 2; i++) {
        char pair[3] = { text[2 * i], text[2 * i + 1], '\0' };
        char *end;
        id[i] = (unsigned char)strtoul(pair, &end, 16);
        if (*end != '\0')
            return 0;
    }
    return (unsigned)(length / 2);
}

static int add_module(struct request *request, char *fields[], int count)
{
    uintptr_t id, start, end, bias;
    if (count != 8 || hex(fields[1], &id) < 0 || hex(fields[2], &start) < 0 ||
        hex(fields[3], &end) < 0 || hex(fields[4], &bias) < 0 || fields[7][0] != '/')
        return -EBADMSG;
    if (array_grow(&request->modules, &request->module_capacity, request->module_count,
                   sizeof *request->modules, 8) < 0)
        return -ENOMEM;
    struct request_module *module = &request->modules[request->module_count];
    memset(module, 0, sizeof *module);
    module->id = id;
    module->info.start = start;
    module->info.end = end;
    module->info.bias = bias;
    module->info.is_main = strcmp(fields[5], "1") == 0;
    module->info.build_id_length = build_id(fields[6], module->info.build_id);
    module->info.file_path = module->info.display_path = strdup(fields[7]);
    if (module->info.file_path == NULL)
        return -ENOMEM;
    /* The crashed program's own index keys its file as /proc/self/exe. */
    if (module->info.is_main)
        module->info.key_path = "/proc/self/exe";
    request->module_count++;
    return 0;
}

static int add_address(struct request *request, char *fields[], int count)
{
    uintptr_t id, address, naming;
    if (count != 4 || hex(fields[1], &id) < 0 || hex(fields[2], &address) < 0 ||
        hex(fields[3], &naming) < 0)
        return -EBADMSG;
    size_t module = request->module_count;
    while (module > 0 && request->modules[module - 1].id != id)
        module--;
    if (module == 0)
        return -EBADMSG; /* its module line comes first */
    if (array_grow(&request->addresses, &request->address_capacity, request->address_count,
                   sizeof *request->addresses, 64) < 0)
        return -ENOMEM;
    request->addresses[request->address_count++] =
        (struct request_address){ module - 1, address, naming };
    return 0;
}

static int parse_options(struct request *request, char *fields[], int count)
{
    if (count != 4)
        return -EBADMSG;
    request->lines = atoi(fields[1]);
    request->inlines = atoi(fields[2]);
    request->demangle = atoi(fields[3]);
    return 0;
}

static int parse_line(struct request *request, char *line)
{
    char *fields[FIELDS_MAX];
    int count = split(line, fields);
    if (count < 1)
        return -EBADMSG;
    if (strcmp(fields[0], "options") == 0)
        return parse_options(request, fields, count);
    if (strcmp(fields[0], "builder") == 0 && count == 2) {
        request->builder_length = build_id(fields[1], request->builder);
        return 0;
    }
    if (strcmp(fields[0], "module") == 0)
        return add_module(request, fields, count);
    if (strcmp(fields[0], "address") == 0)
        return add_address(request, fields, count);
    return -EBADMSG;
}

int request_read(struct request *request, FILE *stream)
{
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    int result = -EBADMSG, first = 1;

    memset(request, 0, sizeof *request);
    request->lines = 2;
    request->inlines = 1;
    request->demangle = 1;
    while ((length = getline(&line, &capacity, stream)) > 0) {
        if (line[length - 1] == '\n')
            line[--length] = '\0';
        if (first) {
            first = 0;
            if (strcmp(line, "execinfo_ex_symbolize 1") != 0)
                break;
            continue;
        }
        if (strcmp(line, "end") == 0) {
            result = 0;
            break;
        }
        result = parse_line(request, line);
        if (result < 0)
            break;
        result = -EBADMSG;
    }
    free(line);
    return result;
}

void request_free(struct request *request)
{
    for (size_t i = 0; i < request->module_count; i++)
        free(request->modules[i].info.file_path);
    free(request->modules);
    free(request->addresses);
    memset(request, 0, sizeof *request);
}
