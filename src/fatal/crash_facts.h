/* crash_facts.h: what the handler collects, as a plain struct, so that
 * the reports are pure functions of it. */
#ifndef EXECINFO_EX_CRASH_FACTS_H
#define EXECINFO_EX_CRASH_FACTS_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <ucontext.h>

#include "fault_access.h"

#define CRASH_FRAMES_MAX 256
#include "crash_registers.h"   /* CRASH_REGISTERS */

/* What a value that may be the fault's address looks like. */
#define CRASH_HINT_NON_CANONICAL 1u  /* bits 63..47 differ: no mapping can hold it */
#define CRASH_HINT_FREE_FILL 2u      /* the free-fill pattern itself (8 fill bytes) */
#define CRASH_HINT_NEAR_FREE_FILL 4u /* within 64 KiB of it: the pattern plus an offset */

/* The faulting instruction's memory operand, decoded from its bytes:
 * [base + index * scale + displacement]. */
struct crash_operand {
    int base, index;          /* indexes of crash_register_names, -1: none */
    int scale;
    int64_t displacement;
    uintptr_t address;        /* its value with the interrupted registers */
    unsigned hints;           /* CRASH_HINT_* */
};

/* What the report is of. */
enum report_kind {
    REPORT_CRASH,           /* a fatal signal */
    REPORT_DUMP_SIGNAL,     /* dump_signal=: a dump, and the program runs on */
    REPORT_DUMP_CALL,       /* backtrace_dump_threads(): frames from its caller */
};

struct crash_facts {
    enum report_kind kind;
    int signo;
    int have_info;            /* 0: the kernel gave no siginfo (no SA_SIGINFO) */
    int code;
    int has_address;          /* a fault: fault_address is the kernel's si_addr */
    uintptr_t fault_address;
    /* A fault the kernel gave no address for (SI_KERNEL: a general-
     * protection fault, such as a non-canonical address): has_address is 0
     * and the hints below say where the address may be seen. */
    int address_unknown;
    /* What the faulting access did and its size (fault_access.h): all
     * unknown for a sent signal or anything but SIGSEGV and SIGBUS. */
    struct fault_access access;
    int free_fill;            /* the fill byte the hints compared with, -1: none */
    int have_operand;         /* operand: the faulting instruction's, decoded */
    struct crash_operand operand;
    unsigned register_hints[CRASH_REGISTERS]; /* CRASH_HINT_* of each register's value */
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
    /* The whole interrupted context, for the minidump: a copy of the
     * handler's ucontext with uc_mcontext.fpregs pointing at this copy's
     * __fpregs_mem (have_float_state: the kernel gave them). */
    int have_context;
    int have_float_state;
    ucontext_t context;
};

/* The register names, in the order of crash_facts.registers. */
extern const char *const crash_register_names[CRASH_REGISTERS];

/* Copy UCONTEXT into *COPY, its floating-point state too (x86-64: with
 * the copy's fpregs pointing into itself; aarch64: the FP/SIMD record in
 * __reserved comes with the copy). Returns whether there was a floating-point
 * state to copy. Signal-safe. */
int crash_copy_context(ucontext_t *copy, const ucontext_t *ucontext);

/* The report's registers (crash_register_names' order) from CONTEXT. */
void crash_registers_of(uintptr_t registers[CRASH_REGISTERS], const ucontext_t *context);

/* Where a walk from a breakpoint's ucontext starts: x86-64's int3 reports
 * the pc after itself, so *CONTEXT's is moved back onto it; aarch64's brk
 * reports its own pc. */
void crash_registers_back_to_breakpoint(ucontext_t *context);

/* Fill FACTS for signal SIGNO with INFO and the handler's UCONTEXT,
 * walking at most FRAMES frames. Signal-safe. */
void crash_collect(struct crash_facts *facts, int signo, const siginfo_t *info,
                   const void *ucontext, int frames);

/* Fill FACTS for a dump called from normal code: the trace of the
 * caller, SKIP frames above this function's own caller dropped, and
 * CONTEXT's registers (may be NULL). Signal-safe. */
void crash_collect_here(struct crash_facts *facts, const ucontext_t *context, int frames,
                        int skip);

/* For a fault without address (SI_KERNEL), after crash_collect: mark it
 * unknown and look for hints, from the registers and the faulting
 * instruction's bytes (read with process_vm_readv). FREE_FILL is the heap
 * layer's fill byte of freed blocks (-1: off). Signal-safe. */
void crash_collect_fault_hints(struct crash_facts *facts, int free_fill);

#endif
