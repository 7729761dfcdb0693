/* dwarf_expression.c: a small DWARF stack machine for CFI expressions
 * (realigned frames, PLT stubs, the signal trampoline).
 * World: signal-safe (fixed stack, checked reads). */
#include "dwarf_expression.h"
#include "leb128.h"
#include "dwarf_cfi.h"
#include "stack_walk.h"

#include <errno.h>
#include <string.h>

#define EXPRESSION_STACK 16

struct machine {
    uintptr_t stack[EXPRESSION_STACK];
    int depth;
    const uint8_t *at, *end;
    int failed;
};

static void push(struct machine *m, uintptr_t value)
{
    if (m->depth == EXPRESSION_STACK)
        m->failed = 1;
    else
        m->stack[m->depth++] = value;
}

static uintptr_t pop(struct machine *m)
{
    if (m->depth == 0) {
        m->failed = 1;
        return 0;
    }
    return m->stack[--m->depth];
}

static uint64_t fixed(struct machine *m, size_t size)
{
    uint64_t value = 0;
    if ((size_t)(m->end - m->at) < size) {
        m->failed = 1;
        return 0;
    }
    memcpy(&value, m->at, size);
    m->at += size;
    return value;
}

static uint64_t uleb(struct machine *m)
{
    return leb128_unsigned(&m->at, m->end, &m->failed);
}

static int64_t sleb(struct machine *m)
{
    return leb128_signed(&m->at, m->end, &m->failed);
}

static void binary(struct machine *m, uint8_t opcode)
{
    uintptr_t right = pop(m), left = pop(m);
    switch (opcode) {
    case 0x1a: push(m, left & right); break;
    case 0x1c: push(m, left - right); break;
    case 0x22: push(m, left + right); break;
    case 0x24: push(m, right < 64 ? left << right : 0); break;
    case 0x2a: push(m, (intptr_t)left >= (intptr_t)right); break;
    }
}

static void step(struct machine *m, struct stack_walk *walk, uint8_t opcode)
{
    if (opcode >= 0x30 && opcode <= 0x4f) {                 /* lit0..lit31 */
        push(m, opcode - 0x30u);
    } else if (opcode >= 0x70 && opcode <= 0x80) {          /* breg0..breg16 */
        unsigned number = opcode - 0x70u;
        int64_t offset = sleb(m);
        if (!(walk->known & CFI_BIT(number)))
            m->failed = 1;
        push(m, walk->registers[number] + (uintptr_t)offset);
    } else {
        switch (opcode) {
        case 0x06: { uintptr_t value;                        /* deref */
                     if (stack_walk_read(walk, pop(m), &value) < 0) m->failed = 1;
                     push(m, value); break; }
        case 0x08: push(m, (uint8_t)fixed(m, 1)); break;
        case 0x09: push(m, (uintptr_t)(int8_t)fixed(m, 1)); break;
        case 0x0a: push(m, (uint16_t)fixed(m, 2)); break;
        case 0x0b: push(m, (uintptr_t)(int16_t)fixed(m, 2)); break;
        case 0x0c: push(m, (uint32_t)fixed(m, 4)); break;
        case 0x0d: push(m, (uintptr_t)(int32_t)fixed(m, 4)); break;
        case 0x0e: case 0x0f: push(m, fixed(m, 8)); break;
        case 0x12: { uintptr_t top = pop(m); push(m, top); push(m, top); break; }
        case 0x23: push(m, pop(m) + uleb(m)); break;        /* plus_uconst */
        case 0x1a: case 0x1c: case 0x22: case 0x24: case 0x2a: binary(m, opcode); break;
        default: m->failed = 1; break;
        }
    }
}

int dwarf_expression_evaluate(struct stack_walk *walk, const uint8_t *block, size_t length,
                              int has_initial, uintptr_t initial, uintptr_t *result)
{
    struct machine m = { .depth = 0, .at = block, .end = block + length, .failed = 0 };

    if (has_initial)
        push(&m, initial);
    while (m.at < m.end && !m.failed)
        step(&m, walk, *m.at++);
    if (m.failed || m.depth == 0)
        return -EINVAL;
    *result = m.stack[m.depth - 1];
    return 0;
}
