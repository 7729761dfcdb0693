/* environment.h: EXECINFO_EX_OPTIONS, parsed once for the whole library. */
#ifndef EXECINFO_EX_ENVIRONMENT_H
#define EXECINFO_EX_ENVIRONMENT_H

#include "options.h"

/* The defaults with EXECINFO_EX_OPTIONS applied (read with secure_getenv);
 * a mistake in it is reported once, on stderr. Normal world. MT-Safe. */
const struct options *environment_options(void);

/* The same without the report on stderr: for the hooks library, whose
 * copy of this module reads the variable a second time in a process where
 * the core library (always loaded with it) reports the mistake. */
const struct options *environment_options_quietly(void);

#endif
