/* trace_reader.c: the fields of one trace line, checked strictly: a line
 * that is not exactly one of the shapes is malformed, so that a damaged
 * trace is reported rather than half-read.
 * World: normal (an ordinary program). */
#define _GNU_SOURCE
#include "trace_reader.h"

#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *at, const char *end)
{
    while (at < end && is_blank(*at))
        at++;
    return at;
}

static const char *token_end(const char *at, const char *end)
{
    while (at < end && !is_blank(*at))
        at++;
    return at;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* All of [AT, END) as hex; "0x" required when PREFIX says so, else
 * optional (glibc's %#lx writes zero as a bare "0"). */
static int parse_hex(const char *at, const char *end, int prefix, uint64_t *value)
{
    int has_prefix = end - at >= 2 && at[0] == '0' && (at[1] == 'x' || at[1] == 'X');
    if (has_prefix)
        at += 2;
    else if (prefix)
        return -1;
    if (at == end)
        return -1;
    uint64_t result = 0;
    for (; at < end; at++) {
        int digit = hex_digit(*at);
        if (digit < 0 || result > UINT64_MAX >> 4)
            return -1;
        result = result << 4 | (uint64_t)digit;
    }
    *value = result;
    return 0;
}

static int parse_pointer(const char *at, const char *end, uint64_t *value)
{
    if (end - at == 5 && memcmp(at, "(nil)", 5) == 0) {
        *value = 0;
        return 0;
    }
    return parse_hex(at, end, 1, value);
}

/* glibc's "(SYM+0xOFF)" inside the parentheses; also SYM-0xOFF and SYM. */
static int parse_symbol(const char *at, const char *end, struct frame *out)
{
    const char *sign = end;
    while (sign > at && sign[-1] != '+' && sign[-1] != '-')
        sign--;
    uint64_t offset = 0;
    if (sign == at) {
        sign = end; /* no offset */
    } else {
        sign--;
        if (parse_hex(sign + 1, end, 0, &offset) < 0 || offset > INT64_MAX)
            return -1;
    }
    if (sign == at)
        return -1;
    out->symbol = at;
    out->symbol_length = (size_t)(sign - at);
    out->symbol_offset = sign < end && *sign == '-' ? -(int64_t)offset : (int64_t)offset;
    return 0;
}

static int parse_module_part(const char *text, const char *open, struct frame *out)
{
    if (open == text) {
        out->kind = FRAME_ADDRESS;
        return 0;
    }
    if (open[-1] == ':') {
        out->kind = open - 1 == text ? FRAME_ADDRESS : FRAME_MODULE_OFFSET;
        out->module = out->kind == FRAME_ADDRESS ? NULL : text;
        out->module_length = (size_t)(open - 1 - text);
        return 0;
    }
    if (open[-1] != ')')
        return -1;
    const char *paren = open - 1;
    while (paren > text && paren[-1] != '(')
        paren--;
    if (paren == text || paren - 1 == text || paren[-2] != ':')
        return -1;
    out->kind = FRAME_MODULE_SYMBOL;
    out->module_length = (size_t)(paren - 2 - text);
    out->module = out->module_length ? text : NULL;
    return parse_symbol(paren, open - 1, out);
}

int trace_frame_parse(const char *text, size_t length, struct frame *out)
{
    const char *end = text + length;

    memset(out, 0, sizeof *out);
    if (length < 3 || end[-1] != ']')
        return -1;
    const char *open = memrchr(text, '[', length);
    if (open == NULL || parse_hex(open + 1, end - 1, 1, &out->address) < 0)
        return -1;
    return parse_module_part(text, open, out);
}

int trace_stack_next(const char **cursor, const char *end, const char **key,
                     size_t *key_length, struct frame *frame)
{
    const char *start = skip_blanks(*cursor, end);
    if (start == end)
        return 0;
    /* A frame ends at a ']' that ends a word: a path may hold blanks. */
    const char *close = start;
    for (;;) {
        close = memchr(close, ']', (size_t)(end - close));
        if (close == NULL)
            return -1;
        close++;
        if (close == end || is_blank(*close))
            break;
    }
    *key = start;
    *key_length = (size_t)(close - start);
    *cursor = close;
    return trace_frame_parse(start, *key_length, frame) < 0 ? -1 : 1;
}

/* The words after the operator: exactly MIN to MAX of them. */
static int split_words(const char *at, const char *end, const char *words[2][2], int min, int max)
{
    int count = 0;
    for (at = skip_blanks(at, end); at < end; at = skip_blanks(at, end)) {
        if (count == max)
            return -1;
        words[count][0] = at;
        at = token_end(at, end);
        words[count++][1] = at;
    }
    return count >= min ? count : -1;
}

static enum trace_line_kind parse_event(const char *at, const char *end, struct trace_line *out)
{
    static const char operators[] = "+-<>!";
    const char *words[2][2];

    if (end - at < 2 || !is_blank(at[1]) || memchr(operators, at[0], 5) == NULL)
        return TRACE_MALFORMED;
    char operator = at[0];
    int sized = operator == '+' || operator == '>';
    int count = split_words(at + 1, end, words, sized ? 2 : 1, sized || operator == '!' ? 2 : 1);
    if (count < 0 || parse_pointer(words[0][0], words[0][1], &out->pointer) < 0)
        return TRACE_MALFORMED;
    if (count == 2 && parse_hex(words[1][0], words[1][1], 0, &out->size) < 0)
        return TRACE_MALFORMED;
    switch (operator) {
    case '+': return TRACE_ALLOCATE;
    case '-': return TRACE_FREE;
    case '<': return TRACE_REALLOC_FROM;
    case '>': return TRACE_REALLOC_TO;
    default: return TRACE_REALLOC_FAILED;
    }
}

/* "@ WHERE OP ...": WHERE ends at the line's last ']' (numbers hold none). */
static enum trace_line_kind parse_located(const char *at, const char *end, struct trace_line *out)
{
    if (end - at < 2 || !is_blank(at[1]))
        return TRACE_MALFORMED;
    const char *where = skip_blanks(at + 1, end);
    const char *close = memrchr(where, ']', (size_t)(end - where));
    if (close == NULL || close + 1 == end || !is_blank(close[1]))
        return TRACE_MALFORMED;
    out->where = where;
    out->where_length = (size_t)(close + 1 - where);
    if (trace_frame_parse(where, out->where_length, &out->where_frame) < 0)
        return TRACE_MALFORMED;
    return parse_event(skip_blanks(close + 1, end), end, out);
}

static enum trace_line_kind parse_comment(const char *at, const char *end, struct trace_line *out)
{
    if (end - at < 7 || memcmp(at, "# stack", 7) != 0 || (end - at > 7 && !is_blank(at[7])))
        return TRACE_NOTHING;
    const char *frames = skip_blanks(at + 7, end);
    if (frames == end)
        return TRACE_MALFORMED;
    out->frames = frames;
    out->frames_length = (size_t)(end - frames);
    return TRACE_STACK;
}

static int has_control_byte(const char *at, const char *end)
{
    for (; at < end; at++) {
        unsigned char byte = (unsigned char)*at;
        if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
            return 1;
    }
    return 0;
}

void trace_line_parse(const char *text, size_t length, struct trace_line *out)
{
    const char *end = text + length;

    memset(out, 0, sizeof *out);
    while (end > text && (is_blank(end[-1]) || end[-1] == '\r'))
        end--;
    const char *at = skip_blanks(text, end);
    if (has_control_byte(at, end))
        out->kind = TRACE_MALFORMED;
    else if (at == end || *at == '=')
        out->kind = TRACE_NOTHING;
    else if (*at == '#')
        out->kind = parse_comment(at, end, out);
    else if (*at == '@')
        out->kind = parse_located(at, end, out);
    else
        out->kind = parse_event(at, end, out);
}
