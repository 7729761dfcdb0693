/* thread_words.c: a thread's outcome and state, in the fixed words the
 * reports use (tests and tools match them).
 * World: signal-safe (constant strings). */
#include "thread_facts.h"

const char *thread_outcome_words(enum thread_outcome outcome)
{
    switch (outcome) {
    case THREAD_READ: return "read";
    case THREAD_BLOCKS_SIGNALS: return "blocks every signal";
    case THREAD_NO_ANSWER: return "did not answer";
    case THREAD_EXITED: return "exited";
    case THREAD_NOT_STOPPED: return "could not be stopped";
    }
    return "unknown";
}

/* The letters of proc(5)'s /proc/PID/stat, field 3. */
const char *thread_state_name(char state)
{
    switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "disk sleep";
    case 'T': return "stopped";
    case 't': return "tracing stop";
    case 'Z': return "zombie";
    case 'X': return "dead";
    case 'I': return "idle";
    case 'P': return "parked";
    default: return "unknown";
    }
}
