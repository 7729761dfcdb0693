/* signal_names.c: tables of names, as <signal.h> spells them.
 * World: signal-safe (constant tables). sigabbrev_np would do for the
 * signals, but nothing names the si_codes, and one file keeps both. */
#define _GNU_SOURCE
#include "signal_names.h"

#include <signal.h>
#include <stddef.h>

static const char *const names[] = {
    [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",     [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
    [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",   [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
    [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1",   [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",   [SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT",
    [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT",   [SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP",
    [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",   [SIGURG] = "SIGURG",   [SIGXCPU] = "SIGXCPU",
    [SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
    [SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",     [SIGSYS] = "SIGSYS",
};

const char *signal_name(int signo)
{
    if (signo <= 0 || (size_t)signo >= sizeof names / sizeof names[0])
        return NULL;
    return names[signo];
}

struct code_name {
    int code;
    const char *name;
};

static const struct code_name segv_codes[] = {
    { SEGV_MAPERR, "SEGV_MAPERR" }, { SEGV_ACCERR, "SEGV_ACCERR" }, { SEGV_BNDERR, "SEGV_BNDERR" },
    { SEGV_PKUERR, "SEGV_PKUERR" }, { 0, NULL } };
static const struct code_name bus_codes[] = {
    { BUS_ADRALN, "BUS_ADRALN" }, { BUS_ADRERR, "BUS_ADRERR" }, { BUS_OBJERR, "BUS_OBJERR" },
    { BUS_MCEERR_AR, "BUS_MCEERR_AR" }, { BUS_MCEERR_AO, "BUS_MCEERR_AO" }, { 0, NULL } };
static const struct code_name ill_codes[] = {
    { ILL_ILLOPC, "ILL_ILLOPC" }, { ILL_ILLOPN, "ILL_ILLOPN" }, { ILL_ILLADR, "ILL_ILLADR" },
    { ILL_ILLTRP, "ILL_ILLTRP" }, { ILL_PRVOPC, "ILL_PRVOPC" }, { ILL_PRVREG, "ILL_PRVREG" },
    { ILL_COPROC, "ILL_COPROC" }, { ILL_BADSTK, "ILL_BADSTK" }, { 0, NULL } };
static const struct code_name fpe_codes[] = {
    { FPE_INTDIV, "FPE_INTDIV" }, { FPE_INTOVF, "FPE_INTOVF" }, { FPE_FLTDIV, "FPE_FLTDIV" },
    { FPE_FLTOVF, "FPE_FLTOVF" }, { FPE_FLTUND, "FPE_FLTUND" }, { FPE_FLTRES, "FPE_FLTRES" },
    { FPE_FLTINV, "FPE_FLTINV" }, { FPE_FLTSUB, "FPE_FLTSUB" }, { 0, NULL } };
static const struct code_name trap_codes[] = {
    { TRAP_BRKPT, "TRAP_BRKPT" }, { TRAP_TRACE, "TRAP_TRACE" }, { 0, NULL } };
static const struct code_name sent_codes[] = {
    { SI_USER, "SI_USER" }, { SI_KERNEL, "SI_KERNEL" }, { SI_QUEUE, "SI_QUEUE" },
    { SI_TIMER, "SI_TIMER" }, { SI_MESGQ, "SI_MESGQ" }, { SI_ASYNCIO, "SI_ASYNCIO" },
    { SI_SIGIO, "SI_SIGIO" }, { SI_TKILL, "SI_TKILL" }, { 0, NULL } };

static const char *find(const struct code_name *table, int code)
{
    for (; table->name != NULL; table++)
        if (table->code == code)
            return table->name;
    return NULL;
}

/* si_pid and si_uid are the sender's only for these: SI_TIMER, SI_MESGQ,
 * SI_ASYNCIO and SI_SIGIO come from no process. */
int signal_code_is_sent(int code)
{
    return code == SI_USER || code == SI_QUEUE || code == SI_TKILL;
}

int signal_code_is_fault(int code)
{
    return code > 0; /* the kernel's codes, SI_KERNEL included: si_addr is set */
}

const char *signal_code_name(int signo, int code)
{
    if (code <= 0 || code == SI_KERNEL)
        return find(sent_codes, code);
    switch (signo) {
    case SIGSEGV: return find(segv_codes, code);
    case SIGBUS: return find(bus_codes, code);
    case SIGILL: return find(ill_codes, code);
    case SIGFPE: return find(fpe_codes, code);
    case SIGTRAP: return find(trap_codes, code);
    default: return NULL;
    }
}
