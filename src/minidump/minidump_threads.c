/* minidump_threads.c: the thread list (each thread's context and stack)
 * and the thread names, the crashing thread first, then the others as
 * the thread set gives them.
 * World: signal-safe. */
#include "minidump_streams.h"
#include "minidump_context.h"

#include <errno.h>
#include <string.h>

#define STACK_BYTES (32 * 1024)  /* from the stack pointer's page up, as Breakpad */
#define PC_BYTES 256             /* around the faulting pc */
#define PAGE 4096u

/* What is known of one thread of the list. */
struct thread_view {
    pid_t tid;
    const char *name;
    size_t name_max;
    const ucontext_t *context;    /* NULL: not read */
    int have_float_state;
    uintptr_t sp, pc;             /* without a context: from the kernel, or 0 */
};

int minidump_thread_count(const struct minidump_input *input)
{
    const struct thread_set *threads = input->threads;
    return 1 + (threads != NULL && threads->count > 0 ? threads->count : 0);
}

static void view_thread(const struct minidump_input *input, int index, struct thread_view *view)
{
    memset(view, 0, sizeof *view);
    if (index == 0) {
        const struct crash_facts *crash = input->crash;
        view->tid = crash->tid;
        view->name = crash->thread_name;
        view->name_max = sizeof crash->thread_name;
        if (crash->have_context) {
            view->context = &crash->context;
            view->have_float_state = crash->have_float_state;
        }
        return;
    }
    const struct thread_facts *thread = &input->threads->threads[index - 1];
    view->tid = thread->tid;
    view->name = thread->name;
    view->name_max = sizeof thread->name;
    if (thread->outcome == THREAD_READ && thread->have_context) {
        view->context = &thread->context;
        view->have_float_state = thread->have_float_state;
    } else if (thread->have_syscall) {
        view->sp = thread->syscall_sp;
        view->pc = thread->syscall_pc;
    }
}

void minidump_remember_memory(struct minidump_state *state, uint64_t start,
                              struct md_location where)
{
    if (state->memory_count < state->memory_capacity)
        state->memory[state->memory_count++] = (struct md_memory_descriptor){ start, where };
}

/* From the stack pointer's page up to 32 KiB or the end of its mapping. */
static void write_stack(struct minidump_state *state, uintptr_t sp, struct md_memory_descriptor *stack)
{
    uintptr_t start = sp & ~(uintptr_t)(PAGE - 1);
    const struct minidump_mapping *mapping = minidump_maps_find(&state->maps, start);
    stack->start_of_memory_range = sp;
    if (sp == 0 || mapping == NULL || !mapping->readable)
        return;
    size_t size = mapping->end - start < STACK_BYTES ? mapping->end - start : STACK_BYTES;
    if (minidump_file_append_memory(&state->file, start, size, &stack->memory) < 0)
        return;
    stack->start_of_memory_range = start;
    minidump_remember_memory(state, start, stack->memory);
}

/* 128 bytes on each side of the pc, within its mapping. */
static void write_pc_memory(struct minidump_state *state, uintptr_t pc)
{
    const struct minidump_mapping *mapping = minidump_maps_find(&state->maps, pc);
    struct md_location where;
    if (mapping == NULL || !mapping->readable)
        return;
    uintptr_t start = pc - mapping->start > PC_BYTES / 2 ? pc - PC_BYTES / 2 : mapping->start;
    uintptr_t end = mapping->end - pc > PC_BYTES / 2 ? pc + PC_BYTES / 2 : mapping->end;
    if (minidump_file_append_memory(&state->file, start, end - start, &where) == 0)
        minidump_remember_memory(state, start, where);
}

static int write_thread(struct minidump_state *state, int index, uint32_t record_rva)
{
    unsigned char context[MINIDUMP_CONTEXT_SIZE_MAX];
    struct thread_view view;
    struct md_raw_thread thread;
    memset(&thread, 0, sizeof thread);
    view_thread(state->input, index, &view);
    thread.thread_id = (uint32_t)view.tid;
    if (view.context != NULL) {
        minidump_context_from_ucontext(context, view.context, view.have_float_state);
        view.sp = minidump_ucontext_stack_pointer(view.context);
        view.pc = minidump_ucontext_pc(view.context);
    } else {
        minidump_context_from_stack_pointer(context, view.sp, view.pc);
    }
    write_stack(state, view.sp, &thread.stack);
    if (index == 0 && view.context != NULL)
        write_pc_memory(state, view.pc);
    int result = minidump_file_append(&state->file, context, minidump_context_size(),
                                      &thread.thread_context);
    if (result < 0)
        return result;
    if (index == 0)
        state->crashing_context = thread.thread_context;
    return minidump_file_write(&state->file, record_rva, &thread, sizeof thread);
}

int minidump_thread_list(struct minidump_state *state, struct md_raw_directory *entry)
{
    uint32_t count = (uint32_t)minidump_thread_count(state->input), rva;
    int result = minidump_file_take(&state->file, 4 + (size_t)count * sizeof(struct md_raw_thread),
                                    &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &count, 4);
    for (uint32_t i = 0; result == 0 && i < count; i++)
        result = write_thread(state, (int)i, rva + 4 + i * (uint32_t)sizeof(struct md_raw_thread));
    if (result < 0)
        return result;
    entry->stream_type = MD_THREAD_LIST_STREAM;
    entry->location = (struct md_location){ 4 + count * (uint32_t)sizeof(struct md_raw_thread), rva };
    return 0;
}

/* Crashpad's MINIDUMP_THREAD_NAME_LIST: tid and UTF-16 name per thread. */
int minidump_thread_names(struct minidump_state *state, struct md_raw_directory *entry)
{
    uint32_t count = (uint32_t)minidump_thread_count(state->input), rva;
    uint32_t size = 4 + count * (uint32_t)sizeof(struct md_raw_thread_name);
    int result = minidump_file_take(&state->file, size, &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &count, 4);
    for (uint32_t i = 0; result == 0 && i < count; i++) {
        struct thread_view view;
        struct md_location name;
        view_thread(state->input, (int)i, &view);
        result = minidump_file_append_string(&state->file, view.name,
                                             strnlen(view.name, view.name_max), &name);
        struct md_raw_thread_name record = { (uint32_t)view.tid, name.rva };
        if (result == 0)
            result = minidump_file_write(&state->file, rva + 4 + i * (uint32_t)sizeof record,
                                         &record, sizeof record);
    }
    if (result < 0)
        return result;
    entry->stream_type = MD_THREAD_NAME_LIST_STREAM;
    entry->location = (struct md_location){ size, rva };
    return 0;
}
