/* fuzz_instruction.c: libFuzzer over the x86-64 instruction walker
 * (src/fatal/instruction_x86_64.c) that runs in the fatal handler on the
 * faulting instruction's bytes: any bytes, cut anywhere, are read only
 * inside their length and give a size the tables can give. */
#include "fatal/instruction_x86_64.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct x86_instruction decoded;
    int memory = x86_instruction_decode(data, size, &decoded);
    if (memory != decoded.memory || decoded.size > 512 || (!memory && decoded.size != 0))
        abort();
    if (decoded.base > 15 || decoded.index > 15 || decoded.base < -1 || decoded.index < -1)
        abort();
    return 0;
}
