/* fuzz_options.c: libFuzzer over the EXECINFO_EX_OPTIONS parser
 * (src/base/options.c): any bytes, as the environment variable would hold
 * them, must parse or be refused with a message, never crash. */
#include "base/options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct options options;
    char error[400];
    options_defaults(&options);
    if (options_parse(&options, text, error, sizeof error) < 0 && memchr(error, '\0', sizeof error) == NULL)
        abort(); /* a refusal always says why, in a terminated message */
    free(text);
    return 0;
}
