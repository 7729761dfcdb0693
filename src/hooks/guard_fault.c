/* guard_fault.c: a fault in the guard pool, as a heap error found at the
 * access: the kind from the slot the address is in, READ or WRITE and the
 * access's size from the fault (src/fatal/fault_access.c: the page-fault
 * code and the faulting instruction; the hooks library links its own
 * copy), the access stack from the fault's context without the hooks
 * library's frames, and the block's stacks from the pool's side table.
 * The heap report's renderers (heap_report.c) write it: the same order and
 * SUMMARY line as any other heap error.
 * World: signal-safe (the fatal handler's crash lead). */
#define _GNU_SOURCE
#include "guard_fault.h"
#include "guard_pool.h"
#include "heap_report.h"
#include "../base/fd_write.h"
#include "execinfo_ex.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

int guard_fault_address(int signo, const void *siginfo, uintptr_t *address)
{
    const siginfo_t *info = siginfo;
    if ((signo != SIGSEGV && signo != SIGBUS) || info == NULL || info->si_code <= 0 ||
        info->si_code == SI_KERNEL)
        return 0;
    *address = (uintptr_t)info->si_addr;
    return 1;
}

/* The slot's side of the facts; 0 when ADDRESS is no guard's fault. */
static int slot_facts(uintptr_t address, struct heap_error_facts *facts)
{
    struct guard_block slot;
    if (!guard_pool_find(address, &slot))
        return 0;
    int in_guard = address >= slot.guard_low && address < slot.guard_high;
    if (slot.state == GUARD_SLOT_LIVE && !in_guard)
        return 0; /* an accessible page: not our fault */
    if (slot.state != GUARD_SLOT_LIVE)
        facts->kind = HEAP_USE_AFTER_FREE;
    else
        facts->kind = address < slot.user ? HEAP_UNDERFLOW : HEAP_OVERFLOW;
    facts->address = address;
    facts->block = slot.user;
    facts->size_known = 1;
    facts->size = slot.size;
    facts->offset = (long)(address - slot.user);
    facts->alloc_stack = slot.alloc_stack;
    facts->free_stack = slot.state != GUARD_SLOT_LIVE ? slot.free_stack : 0;
    return 1;
}

/* What the access did and where: the interrupted instruction first. A
 * fault inside the hooks library (a copy in realloc) is named by the
 * program's call into it: our frames are dropped, that pc with them. */
static void access_facts(const void *siginfo, const void *ucontext, struct heap_access *access)
{
    fault_access_decode(siginfo, ucontext, &access->what);
    access->count = backtrace_ucontext(access->frames, HEAP_ACCESS_FRAMES, ucontext);
    void *pc = access->count > 0 ? access->frames[0] : NULL;
    access->count = heap_report_drop_own(access->frames, access->count);
    access->first_is_pc = access->count > 0 && access->frames[0] == pc;
}

int guard_fault_report(int fd, int format, int signo, const void *siginfo, const void *ucontext)
{
    static struct heap_access access; /* static: an alternate stack is small */
    struct heap_error_facts facts;
    uintptr_t address;
    memset(&facts, 0, sizeof facts);
    if (!guard_fault_address(signo, siginfo, &address) || !slot_facts(address, &facts))
        return 0;
    access_facts(siginfo, ucontext, &access);
    facts.access = &access;
    facts.found = "at the access";
    facts.pid = (uint32_t)getpid();
    facts.tid = (uint32_t)gettid();
    if (format == BACKTRACE_REPORT_JSON) {
        static const char member[] = ",\"heap_error\":";
        fd_write_all(fd, member, sizeof member - 1);
        heap_error_json(fd, &facts);
    } else {
        heap_error_text(fd, &facts);
    }
    return 1;
}
