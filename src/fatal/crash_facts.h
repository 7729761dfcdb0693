/* crash_facts.h: what the handler collects, as a plain struct, so that
 * the reports are pure functions of it. */
#ifndef EXECINFO_EX_CRASH_FACTS_H
#define EXECINFO_EX_CRASH_FACTS_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#define CRASH_FRAMES_MAX 256
#define CRASH_REGISTERS 18   /* rax..r15, rip, eflags */

struct crash_facts {
    int signo;
    int have_info;            /* 0: the kernel gave no siginfo (no SA_SIGINFO) */
    int code;
    int has_address;          /* a fault: fault_address is the kernel's si_addr */
    uintptr_t fault_address;
    int sent;                 /* by a process (kill, sigqueue, tgkill): sender_* */
    pid_t sender_pid;
    uid_t sender_uid;
    pid_t pid, tid;
    char thread_name[32];
    char program[512];        /* /proc/self/exe */
    int64_t time_seconds;     /* CLOCK_REALTIME */
    long time_nanoseconds;
    void *frames[CRASH_FRAMES_MAX];
    unsigned char frame_exact[CRASH_FRAMES_MAX]; /* 1: an interrupted pc, named by itself */
    int frame_count;
    int have_registers;
    uintptr_t registers[CRASH_REGISTERS];
};

/* The register names, in the order of crash_facts.registers. */
extern const char *const crash_register_names[CRASH_REGISTERS];

/* Fill FACTS for signal SIGNO with INFO and the handler's UCONTEXT,
 * walking at most FRAMES frames. Signal-safe. */
void crash_collect(struct crash_facts *facts, int signo, const siginfo_t *info,
                   const void *ucontext, int frames);

#endif
