/* trace_replay.c: allocations enter the live-block table, frees leave it;
 * a "# stack" line right after an allocation gives that block its stack.
 * World: normal (an ordinary program). */
#include "trace_replay.h"
#include "text_escape.h"
#include "trace_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void trace_replay_init(struct trace_replay *replay, struct heap_snapshot *heap,
                       const char *input_name, FILE *messages)
{
    memset(replay, 0, sizeof *replay);
    replay->heap = heap;
    replay->input_name = input_name;
    replay->messages = messages;
}

void trace_replay_free(struct trace_replay *replay)
{
    free(replay->frame_ids);
    replay->frame_ids = NULL;
}

static void message_begin(struct trace_replay *replay)
{
    if (replay->before_message != NULL)
        replay->before_message(replay->message_context);
}

static uint32_t line_origin(uint64_t number)
{
    return number > UINT32_MAX ? UINT32_MAX : (uint32_t)number;
}

static void write_malformed(struct trace_replay *replay, const char *text, size_t length,
                            uint64_t number)
{
    message_begin(replay);
    fprintf(replay->messages, "execinfo_ex_leaks: %s:%" PRIu64 ": malformed line skipped: ",
            replay->input_name, number);
    text_escape_write(replay->messages, text, length);
    putc('\n', replay->messages);
}

static void report_malformed(struct trace_replay *replay, const char *text, size_t length,
                             uint64_t number)
{
    size_t shown = length < TRACE_REPLAY_SHOWN_BYTES ? length : TRACE_REPLAY_SHOWN_BYTES;

    if (++replay->heap->counts.malformed > TRACE_REPLAY_MALFORMED_SHOWN)
        return;
    if (replay->trace_seen) {
        write_malformed(replay, text, shown, number);
        return;
    }
    struct trace_replay_held *held = &replay->held[replay->held_count++];
    held->number = number;
    held->length = shown;
    memcpy(held->text, text, shown);
}

/* The input is a trace: the malformed lines held back are shown. */
static void trace_seen(struct trace_replay *replay)
{
    if (replay->trace_seen)
        return;
    replay->trace_seen = 1;
    for (size_t i = 0; i < replay->held_count; i++)
        write_malformed(replay, replay->held[i].text, replay->held[i].length,
                        replay->held[i].number);
    replay->held_count = 0;
}

/* The stack of a block whose only frame is the caller, WHERE. */
static int where_stack(struct trace_replay *replay, const struct trace_line *line, uint32_t *stack)
{
    struct heap_snapshot *heap = replay->heap;
    uint32_t frame;

    /* glibc's trace without "@": the empty stack, "no caller recorded". */
    if (line->where == NULL)
        return stack_table_intern(&heap->stacks, &frame, 0, stack);
    if (frame_table_intern(&heap->frames, line->where, line->where_length, &line->where_frame,
                           &frame) < 0)
        return -ENOMEM;
    return stack_table_intern(&heap->stacks, &frame, 1, stack);
}

/* An allocation counted for STACK (SIGN 1), or taken back (-1) when the
 * "# stack" line that follows names its real stack. */
static void count_allocation(struct heap_snapshot *heap, uint32_t stack, uint64_t size, int sign)
{
    struct stack_entry *entry = &heap->stacks.stacks[stack];
    entry->alloc_objects += (uint64_t)sign;
    entry->alloc_bytes += sign > 0 ? size : -size;
}

static void report_duplicate(struct trace_replay *replay, uint64_t pointer, uint64_t number,
                             const struct live_block *earlier)
{
    if (++replay->heap->counts.duplicate_allocations > TRACE_REPLAY_MISMATCH_SHOWN)
        return;
    message_begin(replay);
    fprintf(replay->messages, "execinfo_ex_leaks: %s:%" PRIu64 ": 0x%" PRIx64
            " allocated again while live (allocated at line %" PRIu32 "); the new block counts\n",
            replay->input_name, number, pointer, earlier->origin);
}

static int replay_allocation(struct trace_replay *replay, const struct trace_line *line,
                             uint64_t number)
{
    struct live_block block = { line->pointer, line->size, 0, line_origin(number) };
    struct live_block earlier;

    if (line->pointer == 0)
        return 0; /* a failed allocation: glibc writes "+ (nil) SIZE" */
    if (where_stack(replay, line, &block.stack) < 0)
        return -ENOMEM;
    count_allocation(replay->heap, block.stack, block.size, 1);
    int status = live_blocks_put(&replay->heap->blocks, &block, &earlier);
    if (status < 0)
        return status;
    if (status == 1)
        report_duplicate(replay, line->pointer, number, &earlier);
    replay->pending = 1;
    replay->pending_pointer = line->pointer;
    replay->pending_line = number;
    return 0;
}

static void replay_free(struct trace_replay *replay, const struct trace_line *line,
                        uint64_t number, const char *what)
{
    if (line->pointer == 0 || live_blocks_remove(&replay->heap->blocks, line->pointer, NULL))
        return;
    if (++replay->heap->counts.frees_never_allocated > TRACE_REPLAY_MISMATCH_SHOWN)
        return;
    message_begin(replay);
    fprintf(replay->messages, "execinfo_ex_leaks: %s:%" PRIu64 ": %s of 0x%" PRIx64
            ", which was never allocated", replay->input_name, number, what, line->pointer);
    if (line->where != NULL) {
        fputs(", at ", replay->messages);
        text_escape_write(replay->messages, line->where, line->where_length);
    }
    putc('\n', replay->messages);
}

static int reserve_frame_ids(struct trace_replay *replay, size_t count)
{
    if (count < replay->frame_capacity)
        return 0;
    size_t capacity = replay->frame_capacity ? replay->frame_capacity * 2 : 64;
    uint32_t *bigger = realloc(replay->frame_ids, capacity * sizeof *bigger);
    if (bigger == NULL)
        return -ENOMEM;
    replay->frame_ids = bigger;
    replay->frame_capacity = capacity;
    return 0;
}

/* 0, 1 if the frame list is malformed, or -ENOMEM. */
static int replay_stack(struct trace_replay *replay, const struct trace_line *line,
                        int follows_allocation)
{
    const char *cursor = line->frames, *end = line->frames + line->frames_length, *key;
    size_t depth = 0, key_length;
    struct frame frame;
    int status;

    while ((status = trace_stack_next(&cursor, end, &key, &key_length, &frame)) == 1) {
        if (!follows_allocation)
            continue; /* the stack of a free: checked, not kept */
        if (depth >= UINT32_MAX || reserve_frame_ids(replay, depth) < 0 ||
            frame_table_intern(&replay->heap->frames, key, key_length, &frame,
                               &replay->frame_ids[depth]) < 0)
            return -ENOMEM;
        depth++;
    }
    if (status < 0)
        return 1;
    if (!follows_allocation)
        return 0;
    uint32_t stack;
    if (stack_table_intern(&replay->heap->stacks, replay->frame_ids, (uint32_t)depth, &stack) < 0)
        return -ENOMEM;
    struct live_block *block = live_blocks_find(&replay->heap->blocks, replay->pending_pointer);
    if (block != NULL) {
        count_allocation(replay->heap, block->stack, block->size, -1);
        count_allocation(replay->heap, stack, block->size, 1);
        block->stack = stack;
    }
    return 0;
}

static int replay_event(struct trace_replay *replay, const struct trace_line *line,
                        uint64_t number, int follows_allocation)
{
    switch (line->kind) {
    case TRACE_ALLOCATE:
    case TRACE_REALLOC_TO:
        return replay_allocation(replay, line, number);
    case TRACE_FREE:
        replay_free(replay, line, number, "free");
        return 0;
    case TRACE_REALLOC_FROM:
        replay_free(replay, line, number, "realloc");
        return 0;
    case TRACE_STACK:
        return replay_stack(replay, line, follows_allocation);
    default:
        return 0;
    }
}

int trace_replay_line(struct trace_replay *replay, const char *text, size_t length,
                      uint64_t number, int too_long)
{
    struct trace_line line;
    int follows_allocation = replay->pending && replay->pending_line + 1 == number;

    replay->pending = 0;
    if (too_long) {
        report_malformed(replay, text, length, number);
        return 0;
    }
    trace_line_parse(text, length, &line);
    if (line.kind == TRACE_MALFORMED) {
        report_malformed(replay, text, length, number);
        return 0;
    }
    if (line.kind != TRACE_NOTHING && line.kind != TRACE_STACK) {
        replay->heap->counts.events++;
        trace_seen(replay);
    }
    int status = replay_event(replay, &line, number, follows_allocation);
    if (status == 1) {
        report_malformed(replay, text, length, number);
    } else if (status == 0 && line.kind == TRACE_STACK) {
        replay->stack_lines++;
        trace_seen(replay);
    }
    return status < 0 ? status : 0;
}

static void report_total(struct trace_replay *replay, uint64_t count, uint64_t shown,
                         const char *what)
{
    if (count == 0)
        return;
    fprintf(replay->messages, "execinfo_ex_leaks: %s: %" PRIu64 " %s", replay->input_name,
            count, what);
    if (count > shown)
        fprintf(replay->messages, " (the first %" PRIu64 " shown)", shown);
    fputc('\n', replay->messages);
}

int trace_replay_is_trace(const struct trace_replay *replay)
{
    const struct input_counts *counts = &replay->heap->counts;
    return counts->events > 0 || replay->stack_lines > 0 || counts->malformed == 0;
}

void trace_replay_finish(struct trace_replay *replay)
{
    const struct input_counts *counts = &replay->heap->counts;

    if (!trace_replay_is_trace(replay))
        return;
    trace_seen(replay);

    report_total(replay, counts->malformed, TRACE_REPLAY_MALFORMED_SHOWN,
                 counts->malformed == 1 ? "malformed line skipped" : "malformed lines skipped");
    report_total(replay, counts->frees_never_allocated, TRACE_REPLAY_MISMATCH_SHOWN,
                 counts->frees_never_allocated == 1 ? "free of a pointer never allocated"
                                                    : "frees of pointers never allocated");
    report_total(replay, counts->duplicate_allocations, TRACE_REPLAY_MISMATCH_SHOWN,
                 counts->duplicate_allocations == 1 ? "duplicate allocation"
                                                    : "duplicate allocations");
}
