/* environment.c: read EXECINFO_EX_OPTIONS once.
 * World: normal (secure_getenv, pthread_once). */
#define _GNU_SOURCE
#include "environment.h"
#include "fd_write.h"
#include "load_touched.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static LOAD_TOUCHED struct options parsed; /* load_touched.h */
static LOAD_TOUCHED pthread_once_t parsed_once = PTHREAD_ONCE_INIT;
static LOAD_TOUCHED int quiet;

static void parse_environment(void)
{
    char error[1024];

    options_defaults(&parsed);
    if (options_parse(&parsed, secure_getenv("EXECINFO_EX_OPTIONS"), error, sizeof error - 1) < 0 &&
        !quiet) {
        size_t length = strlen(error);
        error[length] = '\n';
        fd_write_all(2, error, length + 1);
    }
}

const struct options *environment_options(void)
{
    pthread_once(&parsed_once, parse_environment);
    return &parsed;
}

static void parse_environment_quietly(void)
{
    quiet = 1;
    parse_environment();
}

const struct options *environment_options_quietly(void)
{
    pthread_once(&parsed_once, parse_environment_quietly);
    return &parsed;
}
