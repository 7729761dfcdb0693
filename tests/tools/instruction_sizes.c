/* instruction_sizes.c: for tests/tools/compare_instruction_sizes.py, each
 * input line of hex bytes (objdump's) to the access size the x86-64
 * instruction walker gives (0: no memory operand or unknown). */
#include "fatal/instruction_x86_64.h"

#include <stdio.h>

int main(void)
{
    char line[256];
    while (fgets(line, sizeof line, stdin) != NULL) {
        unsigned char bytes[X86_INSTRUCTION_MAX];
        size_t count = 0;
        const char *at = line;
        unsigned value;
        int used;
        while (count < sizeof bytes && sscanf(at, "%x%n", &value, &used) == 1) {
            bytes[count++] = (unsigned char)value;
            at += used;
        }
        struct x86_instruction decoded;
        x86_instruction_decode(bytes, count, &decoded);
        printf("%u\n", decoded.memory ? decoded.size : 0);
    }
    return 0;
}
