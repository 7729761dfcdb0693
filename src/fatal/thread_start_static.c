/* thread_start_static.c: the static library's side of thread_start.c.
 * World: normal. A static link cannot interpose pthread_create, so only
 * the installing thread gets an alternate stack (docs/DECISIONS.md). */
#include "alternate_stack.h"

void alternate_stack_for_new_threads(int enable)
{
    (void)enable;
}
