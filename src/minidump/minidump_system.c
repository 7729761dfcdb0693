/* minidump_system.c: the exception stream (the signal, its code and
 * address, the crashing thread's context), the memory list, the system
 * info (CPU, OS, kernel version) and the misc info (the process id).
 * World: signal-safe (uname and the cpuid of the architecture's file). */
#include "minidump_streams.h"
#include "minidump_context.h"

#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Breakpad's code for a dump without a crash (its processor says
 * DUMP_REQUESTED). */
#define MD_EXCEPTION_CODE_LIN_DUMP_REQUESTED 0xffffffffu

/* As Breakpad's writer: code = the signal, flags = si_code, address =
 * si_addr; for a dump (ExceptionHandler::WriteMinidump) DUMP_REQUESTED
 * at the dumping thread's pc. The context is the one in the thread list. */
int minidump_exception(struct minidump_state *state, struct md_raw_directory *entry)
{
    const struct crash_facts *crash = state->input->crash;
    struct md_raw_exception_stream stream;
    memset(&stream, 0, sizeof stream);
    stream.thread_id = (uint32_t)crash->tid;
    if (crash->kind == REPORT_CRASH) {
        stream.exception_record.exception_code = (uint32_t)crash->signo;
        stream.exception_record.exception_flags = crash->have_info ? (uint32_t)crash->code : 0;
        stream.exception_record.exception_address = crash->has_address ? crash->fault_address : 0;
    } else {
        stream.exception_record.exception_code = MD_EXCEPTION_CODE_LIN_DUMP_REQUESTED;
        stream.exception_record.exception_address =
            crash->have_context ? minidump_ucontext_pc(&crash->context) : 0;
    }
    stream.thread_context = state->crashing_context;
    if (stream.thread_context.data_size == 0 && crash->have_context) {
        unsigned char context[MINIDUMP_CONTEXT_SIZE_MAX];
        minidump_context_from_ucontext(context, &crash->context, crash->have_float_state);
        int result = minidump_file_append(&state->file, context, minidump_context_size(),
                                          &stream.thread_context);
        if (result < 0)
            return result;
    }
    entry->stream_type = MD_EXCEPTION_STREAM;
    return minidump_file_append(&state->file, &stream, sizeof stream, &entry->location);
}

int minidump_memory_list(struct minidump_state *state, struct md_raw_directory *entry)
{
    uint32_t count = (uint32_t)state->memory_count, rva;
    uint32_t size = 4 + count * (uint32_t)sizeof(struct md_memory_descriptor);
    int result = minidump_file_take(&state->file, size, &rva);
    if (result == 0)
        result = minidump_file_write(&state->file, rva, &count, 4);
    if (result == 0 && count > 0)
        result = minidump_file_write(&state->file, rva + 4, state->memory,
                                     count * sizeof(struct md_memory_descriptor));
    if (result < 0)
        return result;
    entry->stream_type = MD_MEMORY_LIST_STREAM;
    entry->location = (struct md_location){ size, rva };
    return 0;
}

static size_t append_word(char *out, size_t used, size_t capacity, const char *word)
{
    if (used > 0 && used + 1 < capacity)
        out[used++] = ' ';
    for (; *word != '\0' && used + 1 < capacity; word++)
        out[used++] = *word;
    out[used] = '\0';
    return used;
}

/* "Linux 6.1.0-28-amd64 #1 SMP ... x86_64", as Breakpad joins uname's
 * fields into the service-pack string that processors show. */
static int write_os_version(struct minidump_state *state, uint32_t *rva)
{
    struct utsname names;
    char text[4 * sizeof names.release];
    struct md_location where;
    if (uname(&names) != 0)
        return -1;
    size_t used = 0;
    used = append_word(text, used, sizeof text, names.sysname);
    used = append_word(text, used, sizeof text, names.release);
    used = append_word(text, used, sizeof text, names.version);
    used = append_word(text, used, sizeof text, names.machine);
    int result = minidump_file_append_string(&state->file, text, used, &where);
    if (result == 0)
        *rva = where.rva;
    return result;
}

/* The first version of MINIDUMP_MISC_INFO: the process id (Breakpad's
 * Linux writer has none; Crashpad's does). */
int minidump_misc_info(struct minidump_state *state, struct md_raw_directory *entry)
{
    struct md_raw_misc_info info;
    memset(&info, 0, sizeof info);
    info.size_of_info = sizeof info;
    info.flags1 = MD_MISCINFO_FLAGS1_PROCESS_ID;
    info.process_id = (uint32_t)state->input->crash->pid;
    entry->stream_type = MD_MISC_INFO_STREAM;
    return minidump_file_append(&state->file, &info, sizeof info, &entry->location);
}

/* The processors present ("0-7" or "0,2-3" in sysfs), at most 255. */
static unsigned processor_count(void)
{
    char text[256];
    int fd = open("/sys/devices/system/cpu/present", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    unsigned count = 0, first = 0, value = 0;
    int in_range = 0;
    for (ssize_t i = 0; i <= got; i++) {
        char c = i < got ? text[i] : ',';
        if (c >= '0' && c <= '9') {
            value = value * 10 + (unsigned)(c - '0');
        } else if (c == '-') {
            first = value, value = 0, in_range = 1;
        } else if (c == ',' || c == '\n') {
            if (i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9')
                count += in_range ? value - first + 1 : 1;
            value = 0, in_range = 0;
        }
    }
    return count > 255 ? 255 : count;
}

int minidump_system_info(struct minidump_state *state, struct md_raw_directory *entry)
{
    struct md_raw_system_info info;
    memset(&info, 0, sizeof info);
    minidump_describe_cpu(&info);
    info.number_of_processors = (uint8_t)processor_count();
    info.platform_id = MD_OS_LINUX;
    write_os_version(state, &info.csd_version_rva);
    entry->stream_type = MD_SYSTEM_INFO_STREAM;
    return minidump_file_append(&state->file, &info, sizeof info, &entry->location);
}
