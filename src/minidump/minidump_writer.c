/* minidump_writer.c: the minidump, stream by stream in the order of
 * Breakpad's Linux writer (minidump_writer.cc, Dump()), then the thread
 * names, misc info and memory info list that Crashpad adds; the header
 * and the directory last, once the streams that could be written are
 * known. A stream that fails is left
 * out of the directory and the others stay usable.
 * World: signal-safe (mmap'd scratch memory, raw syscalls). */
#define _GNU_SOURCE
#include "minidump_streams.h"
#include "../base/signal_consume.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define STREAMS_MAX 16
#define COPY_BYTES (64 * 1024)
#define MAPPINGS_MAX 16384
#define PATH_BYTES (256 * 1024)

static const struct { uint32_t type; const char *path; } linux_files[] = {
    { MD_LINUX_CPU_INFO, "/proc/cpuinfo" },
    { MD_LINUX_PROC_STATUS, "/proc/self/status" },
    { MD_LINUX_LSB_RELEASE, "/etc/lsb-release" },   /* most systems have none: left out */
    { MD_LINUX_CMD_LINE, "/proc/self/cmdline" },
    { MD_LINUX_ENVIRON, "/proc/self/environ" },
    { MD_LINUX_AUXV, "/proc/self/auxv" },
    { MD_LINUX_MAPS, "/proc/self/maps" },
};

struct scratch {
    void *memory;
    size_t size;
};

static size_t round_up(size_t size)
{
    return (size + 4095) & ~(size_t)4095;
}

/* One mapping holds the copy buffer, the maps table and the memory list. */
static int map_scratch(struct minidump_state *state, int fd, struct scratch *scratch)
{
    size_t memory_capacity = (size_t)minidump_thread_count(state->input) * 2 + 2;
    size_t mappings = round_up(MAPPINGS_MAX * sizeof(struct minidump_mapping));
    size_t descriptors = round_up(memory_capacity * sizeof(struct md_memory_descriptor));
    scratch->size = COPY_BYTES + mappings + PATH_BYTES + descriptors;
    scratch->memory = mmap(NULL, scratch->size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scratch->memory == MAP_FAILED)
        return -ENOMEM;
    char *at = scratch->memory;
    minidump_file_init(&state->file, fd, at, COPY_BYTES);
    at += COPY_BYTES;
    state->maps.mappings = (struct minidump_mapping *)at;
    state->maps.capacity = MAPPINGS_MAX;
    at += mappings;
    state->maps.paths = at;
    state->maps.paths_capacity = PATH_BYTES;
    at += PATH_BYTES;
    state->memory = (struct md_memory_descriptor *)at;
    state->memory_capacity = memory_capacity;
    return 0;
}

static void write_streams(struct minidump_state *state, struct md_raw_directory *directory,
                          uint32_t *count)
{
    int (*const first[])(struct minidump_state *, struct md_raw_directory *) = {
        minidump_thread_list, minidump_module_list, minidump_memory_list,
        minidump_exception, minidump_system_info,
    };
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (first[i](state, &directory[*count]) == 0)
            (*count)++;
    for (size_t i = 0; i < sizeof linux_files / sizeof linux_files[0]; i++)
        if (minidump_linux_file(state, linux_files[i].type, linux_files[i].path,
                                &directory[*count]) == 0)
            (*count)++;
    if (minidump_dso_debug(state, &directory[*count]) == 0)
        (*count)++;
    int (*const added[])(struct minidump_state *, struct md_raw_directory *) = {
        minidump_thread_names, minidump_misc_info, minidump_memory_info_list,
    };
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++)
        if (added[i](state, &directory[*count]) == 0)
            (*count)++;
}

static int write_dump(struct minidump_state *state)
{
    struct md_raw_directory directory[STREAMS_MAX];
    uint32_t header_rva, directory_rva, count = 0;
    memset(directory, 0, sizeof directory);
    int result = minidump_file_take(&state->file, sizeof(struct md_raw_header), &header_rva);
    if (result == 0)
        result = minidump_file_take(&state->file, sizeof directory, &directory_rva);
    if (result < 0)
        return result;
    minidump_maps_read(&state->maps); /* without it: no stacks, the rest still */
    write_streams(state, directory, &count);
    struct md_raw_header header = {
        .signature = MD_HEADER_SIGNATURE,
        .version = MD_HEADER_VERSION,
        .stream_count = count,
        .stream_directory_rva = directory_rva,
        .time_date_stamp = (uint32_t)state->input->crash->time_seconds,
    };
    result = minidump_file_write(&state->file, directory_rva, directory,
                                 count * sizeof directory[0]);
    if (result == 0)
        result = minidump_file_write(&state->file, header_rva, &header, sizeof header);
    int finished = minidump_file_finish(&state->file);
    return result < 0 ? result : finished;
}

int minidump_write(int fd, const struct minidump_input *input)
{
    int saved_errno = errno;
    struct minidump_state state;
    struct scratch scratch;
    sigset_t quiet, previous;
    sigemptyset(&quiet);
    sigaddset(&quiet, SIGXFSZ);
    int masked = pthread_sigmask(SIG_BLOCK, &quiet, &previous) == 0;
    memset(&state, 0, sizeof state);
    state.input = input;
    int result = map_scratch(&state, fd, &scratch);
    if (result == 0) {
        result = write_dump(&state);
        munmap(scratch.memory, scratch.size);
    }
    if (masked) {
        if (state.file.error == -EFBIG && !sigismember(&previous, SIGXFSZ))
            signal_consume(SIGXFSZ); /* as fd_write.c: not a death by SIGXFSZ */
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
    }
    errno = saved_errno;
    return result;
}
