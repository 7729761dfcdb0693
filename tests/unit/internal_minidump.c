/* The minidump writer alone: the file name, and a dump of this process's
 * own context written without a crash and without a symbol index, which
 * Breakpad's minidump_dump must read (internal modules, static library). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>

#include "support.h"
#include "minidump/minidump.h"
#include "minidump/minidump_format.h"
#include "minidump/minidump_path.h"

Test(minidump_path, names_program_pid_and_utc_time)
{
    char name[64];
    cr_assert_eq(minidump_file_name("/usr/bin/server", 4711, 1796410795, name, sizeof name), 0);
    cr_assert_str_eq(name, "server-4711-20261204T185955Z.dmp");
    cr_assert_eq(minidump_file_name("", 1, 0, name, sizeof name), 0);
    cr_assert_str_eq(name, "program-1-19700101T000000Z.dmp");
    cr_assert_eq(minidump_file_name("/usr/bin/server", 4711, 0, name, 20), -ENAMETOOLONG);
}

static void facts_of_here(struct crash_facts *facts)
{
    ucontext_t here;
    memset(facts, 0, sizeof *facts);
    memset(&here, 0, sizeof here); /* getcontext saves no x87 or SSE registers */
    cr_assert_eq(getcontext(&here), 0);
    facts->kind = REPORT_CRASH;
    facts->signo = SIGSEGV;
    facts->have_info = 1;
    facts->code = SEGV_MAPERR;
    facts->has_address = 1;
    facts->fault_address = 16;
    facts->pid = getpid();
    facts->tid = gettid();
    strcpy(facts->thread_name, "internal");
    strcpy(facts->program, "/proc/self/exe");
    facts->time_seconds = time(NULL);
    facts->have_float_state = crash_copy_context(&facts->context, &here);
    facts->have_context = 1;
}

Test(minidump_writer, writes_a_dump_that_breakpad_reads_without_an_index, .timeout = 60)
{
    static struct crash_facts facts;
    char path[] = "/tmp/execinfo_ex_minidump_internal.XXXXXX";
    facts_of_here(&facts);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    struct minidump_input input = { &facts, NULL, NULL };
    errno = 1234;
    cr_assert_eq(minidump_write(fd, &input), 0);
    cr_assert_eq(errno, 1234, "errno is preserved");
    struct md_raw_header header;
    cr_assert_eq(pread(fd, &header, sizeof header, 0), (ssize_t)sizeof header);
    close(fd);
    cr_assert_eq(header.signature, MD_HEADER_SIGNATURE);
    cr_assert_eq(header.version, MD_HEADER_VERSION);
    cr_assert_geq(header.stream_count, 12u, "every stream but lsb-release and perhaps DSO debug");

    const char *build = getenv("EXECINFO_EX_BUILD");
    cr_assert_not_null(build, "EXECINFO_EX_BUILD is not set (run by make)");
    /* Its listing and its log apart: interleaved, a log line can cut a line. */
    static char output[1 << 20], log[1 << 16];
    char command[4096], listing[128], log_path[128];
    snprintf(listing, sizeof listing, "%s.txt", path);
    snprintf(log_path, sizeof log_path, "%s.log", path);
    snprintf(command, sizeof command, "'%s/breakpad/minidump_dump' '%s' >'%s' 2>'%s'", build, path,
             listing, log_path);
    int status = system(command);
    const char *files[] = { listing, log_path };
    char *contents[] = { output, log };
    size_t sizes[] = { sizeof output, sizeof log };
    for (int i = 0; i < 2; i++) {
        int fd = open(files[i], O_RDONLY);
        cr_assert_geq(fd, 0);
        read_all(fd, contents[i], sizes[i]);
        close(fd);
        unlink(files[i]);
    }
    unlink(path);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", log);
    cr_assert(strstr(log, "ERROR") == NULL, "%s", log);
    cr_assert(strstr(output, "module_count = 0"), "no empty module list");
}

Test(minidump_writer, an_fd_that_cannot_be_written_is_an_error)
{
    static struct crash_facts facts;
    facts_of_here(&facts);
    struct minidump_input input = { &facts, NULL, NULL };
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    cr_assert_lt(minidump_write(pipe_fds[0], &input), 0); /* a read end: EBADF, or ESPIPE */
    close(pipe_fds[0]);
    close(pipe_fds[1]);
}
