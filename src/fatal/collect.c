/* collect.c: gather the facts of a crash, from inside the handler.
 * World: signal-safe (raw syscalls: gettid, prctl, readlink, clock). */
#define _GNU_SOURCE
#include "crash_facts.h"
#include "signal_names.h"
#include "execinfo_ex.h"
#include "../unwind/capture.h"

#include <sys/prctl.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static void collect_identity(struct crash_facts *facts)
{
    facts->pid = getpid();
    facts->tid = gettid();
    /* The kernel's copy, 16 bytes with the NUL: a syscall, no file to open. */
    if (prctl(PR_GET_NAME, facts->thread_name, 0, 0, 0) != 0)
        facts->thread_name[0] = '\0';
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
    crash_registers_of(facts->registers, context);
    facts->have_registers = 1;
    facts->have_float_state = crash_copy_context(&facts->context, context);
    facts->have_context = 1;
}

/* An int3 (0xcc, one byte) reports the pc after itself, which may already
 * be the next line or function: frame 0 is put back on the breakpoint
 * (crash_registers_back_to_breakpoint). The kernel sends SI_KERNEL for
 * int3 on x86-64, TRAP_BRKPT elsewhere. */
static int stopped_after_breakpoint(int signo, const siginfo_t *info)
{
    return signo == SIGTRAP && info != NULL &&
           (info->si_code == SI_KERNEL || info->si_code == TRAP_BRKPT);
}

/* After a breakpoint the walk starts from the int3 itself: its function's
 * unwind rules, not those of whatever follows it. */
static int walk_context(void **frames, unsigned char *exact, int size, const ucontext_t *ucontext,
                        int at_breakpoint)
{
    if (!at_breakpoint)
        return capture_ucontext_kinds(frames, exact, size, ucontext);
    static ucontext_t moved_back; /* static: an alternate stack is small */
    moved_back = *ucontext;
    crash_registers_back_to_breakpoint(&moved_back);
    return capture_ucontext_kinds(frames, exact, size, &moved_back);
}

void crash_collect(struct crash_facts *facts, int signo, const siginfo_t *info,
                   const void *ucontext, int frames)
{
    memset(facts, 0, sizeof *facts);
    facts->signo = signo;
    if (info != NULL) {
        facts->have_info = 1;
        facts->code = info->si_code;
        facts->sent = signal_code_is_sent(info->si_code);
        facts->has_address = signal_code_is_fault(info->si_code);
        if (facts->sent) {
            facts->sender_pid = info->si_pid;
            facts->sender_uid = info->si_uid;
        }
        if (facts->has_address)
            facts->fault_address = (uintptr_t)info->si_addr;
    }
    collect_identity(facts);
    if (frames > CRASH_FRAMES_MAX)
        frames = CRASH_FRAMES_MAX;
    if (ucontext != NULL) {
        facts->frame_count = walk_context(facts->frames, facts->frame_exact, frames, ucontext,
                                          stopped_after_breakpoint(signo, info));
        collect_registers(facts, ucontext);
    }
    fault_access_decode(info, ucontext, &facts->access);
}

void crash_collect_here(struct crash_facts *facts, const ucontext_t *context, int frames, int skip)
{
    memset(facts, 0, sizeof *facts);
    facts->kind = REPORT_DUMP_CALL;
    collect_identity(facts);
    if (frames > CRASH_FRAMES_MAX)
        frames = CRASH_FRAMES_MAX;
    /* Frame 0 is this function's caller's own call of it: SKIP more drop
     * the library's frames above the public function. */
    int count = capture_backtrace_kinds(facts->frames, facts->frame_exact, frames);
    skip = skip + 1 < count ? skip + 1 : count;
    memmove(facts->frames, facts->frames + skip, (size_t)(count - skip) * sizeof facts->frames[0]);
    memmove(facts->frame_exact, facts->frame_exact + skip, (size_t)(count - skip));
    facts->frame_count = count - skip;
    if (context != NULL)
        collect_registers(facts, context);
}
