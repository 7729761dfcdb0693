/* request.h: the crash handler's request to the second stage, as read
 * from stdin (its format: src/fatal/second_stage.c). */
#ifndef EXECINFO_EX_SYMBOLIZE_REQUEST_H
#define EXECINFO_EX_SYMBOLIZE_REQUEST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "symbolize/module_list.h"

struct request_module {
    unsigned long id;
    struct module_info info;      /* file_path and display_path: the request's path */
};

struct request_address {
    size_t module;                /* index in request.modules */
    uintptr_t address, naming;
};

struct request {
    int lines, inlines, demangle; /* the crashed process's options */
    unsigned char builder[MODULE_BUILD_ID_MAX]; /* its library's build-id */
    unsigned builder_length;
    struct request_module *modules;
    size_t module_count, module_capacity;
    struct request_address *addresses;
    size_t address_count, address_capacity;
};

/* Read the whole request from STREAM. Returns 0, -EBADMSG for a request
 * that is not one (the lines after the fault are not read), -ENOMEM. */
int request_read(struct request *request, FILE *stream);
void request_free(struct request *request);

#endif
