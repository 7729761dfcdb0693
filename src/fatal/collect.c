/* collect.c: gather the facts of a crash, from inside the handler.
 * World: signal-safe (raw syscalls: gettid, readlink, open/read, clock). */
#define _GNU_SOURCE
#include "crash_facts.h"
#include "signal_names.h"
#include "execinfo_ex.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

const char *const crash_register_names[CRASH_REGISTERS] = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
    "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
};

static const int register_index[CRASH_REGISTERS] = {
    REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
    REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP, REG_EFL,
};

static void read_small_file(const char *path, char *out, size_t capacity)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = read(fd, out, capacity - 1);
    close(fd);
    if (got <= 0)
        return;
    out[got] = '\0';
    char *newline = memchr(out, '\n', (size_t)got);
    if (newline != NULL)
        *newline = '\0';
}

static void collect_identity(struct crash_facts *facts)
{
    facts->pid = getpid();
    facts->tid = gettid();
    read_small_file("/proc/thread-self/comm", facts->thread_name, sizeof facts->thread_name);
    ssize_t length = readlink("/proc/self/exe", facts->program, sizeof facts->program - 1);
    facts->program[length > 0 ? length : 0] = '\0';
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) == 0) {
        facts->time_seconds = now.tv_sec;
        facts->time_nanoseconds = now.tv_nsec;
    }
}

static void collect_registers(struct crash_facts *facts, const ucontext_t *context)
{
    for (int i = 0; i < CRASH_REGISTERS; i++)
        facts->registers[i] = (uintptr_t)context->uc_mcontext.gregs[register_index[i]];
    facts->have_registers = 1;
}

void crash_collect(struct crash_facts *facts, int signo, const siginfo_t *info,
                   const void *ucontext, int frames)
{
    memset(facts, 0, sizeof *facts);
    facts->signo = signo;
    if (info != NULL) {
        facts->code = info->si_code;
        facts->sent = signal_code_is_sent(info->si_code);
        if (facts->sent) {
            facts->sender_pid = info->si_pid;
            facts->sender_uid = info->si_uid;
        } else {
            facts->fault_address = (uintptr_t)info->si_addr;
        }
    }
    collect_identity(facts);
    if (frames > CRASH_FRAMES_MAX)
        frames = CRASH_FRAMES_MAX;
    if (ucontext != NULL) {
        facts->frame_count = backtrace_ucontext(facts->frames, frames, ucontext);
        collect_registers(facts, ucontext);
    }
}
