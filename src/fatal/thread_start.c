/* thread_start.c: pthread_create, interposed so that every new thread
 * starts with an alternate signal stack while the fatal handler is on.
 * World: normal. Linked into the shared library only: in a static link
 * it would collide with libc.a's pthread_create.
 *
 * One of the libc functions the library exports (with dlopen, dlmopen and
 * dlclose: src/symbolize/load_watch.c); it forwards to the
 * next pthread_create unchanged while the handler is off. */
#define _GNU_SOURCE
#include "alternate_stack.h"
#include "../base/load_touched.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef int create_function(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static LOAD_TOUCHED atomic_int enabled;
static _Atomic(create_function *) next_create;

struct start {
    void *(*routine)(void *);
    void *argument;
};

void alternate_stack_for_new_threads(int enable)
{
    atomic_store(&enabled, enable);
}

static void *start_with_alternate_stack(void *opaque)
{
    struct start start = *(struct start *)opaque;
    free(opaque);
    alternate_stack_give_this_thread();
    return start.routine(start.argument);
}

static create_function *find_next_create(void)
{
    create_function *next = atomic_load(&next_create);
    if (next == NULL) {
        next = (create_function *)dlsym(RTLD_NEXT, "pthread_create");
        atomic_store(&next_create, next);
    }
    return next;
}

__attribute__((visibility("default")))
int pthread_create(pthread_t *thread, const pthread_attr_t *attributes,
                   void *(*routine)(void *), void *argument)
{
    create_function *next = find_next_create();
    if (next == NULL)
        return EAGAIN;
    if (!atomic_load(&enabled))
        return next(thread, attributes, routine, argument);
    struct start *start = malloc(sizeof *start);
    if (start == NULL)
        return next(thread, attributes, routine, argument); /* no stack rather than no thread */
    start->routine = routine;
    start->argument = argument;
    int result = next(thread, attributes, start_with_alternate_stack, start);
    if (result != 0)
        free(start);
    return result;
}
