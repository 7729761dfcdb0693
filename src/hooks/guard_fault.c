/* guard_fault.c: a fault in the guard pool, as a heap error found at the
 * access. World: signal-safe (the fatal handler's heap section). */
#include "guard_fault.h"
#include "guard_pool.h"
#include "heap_report.h"
#include "../base/json_out.h"
#include "../base/text_out.h"
#include "execinfo_ex.h"

#include <signal.h>

int guard_fault_facts(uintptr_t address, struct guard_fault *facts)
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
    facts->size = slot.size;
    facts->offset = (long)(address - slot.user);
    facts->alloc_stack = slot.alloc_stack;
    facts->free_stack = slot.state != GUARD_SLOT_LIVE ? slot.free_stack : 0;
    return 1;
}

static int fault_address(int signo, const siginfo_t *info, uintptr_t *address)
{
    if ((signo != SIGSEGV && signo != SIGBUS) || info == NULL || info->si_code <= 0 ||
        info->si_code == SI_KERNEL)
        return 0;
    *address = (uintptr_t)info->si_addr;
    return 1;
}

static const char *where(const struct guard_fault *facts)
{
    if (facts->offset < 0)
        return " (before its start)\n";
    return (size_t)facts->offset >= facts->size ? " (past its end)\n" : " (inside it)\n";
}

static void section_text(int fd, const struct guard_fault *facts)
{
    char buffer[256];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    text_out_string(&out, "*** execinfo_ex: heap error: ");
    text_out_string(&out, heap_error_name(facts->kind));
    text_out_string(&out, " at ");
    heap_report_hex(&out, facts->address);
    text_out_string(&out, " (found at the access: a guard page; the access stack is the "
                          "crash's above)\n*** block ");
    heap_report_hex(&out, facts->block);
    text_out_string(&out, " of ");
    text_out_decimal(&out, facts->size);
    text_out_string(&out, " bytes; the address is at offset ");
    heap_report_signed(&out, facts->offset);
    text_out_string(&out, where(facts));
    if (facts->free_stack != 0)
        heap_report_stack(&out, fd, "freed", facts->free_stack);
    heap_report_stack(&out, fd, "allocated", facts->alloc_stack);
    text_out_flush(&out);
}

static void section_json(int fd, const struct guard_fault *facts)
{
    char buffer[256];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    json_key(&out, "heap_guard_fault", 0);
    text_out_string(&out, "{\"kind\":\"");
    text_out_string(&out, heap_error_name(facts->kind));
    text_out_string(&out, "\",\"found\":\"at the access\",\"address\":");
    json_hex(&out, facts->address);
    text_out_string(&out, ",\"block\":");
    json_hex(&out, facts->block);
    text_out_string(&out, ",\"size\":");
    text_out_decimal(&out, facts->size);
    text_out_string(&out, ",\"offset\":");
    json_signed(&out, facts->offset);
    heap_report_json_stack(&out, fd, "free_stack", facts->free_stack);
    heap_report_json_stack(&out, fd, "alloc_stack", facts->alloc_stack);
    text_out_char(&out, '}');
    text_out_flush(&out);
}

int guard_fault_section(int fd, int format, int signo, const void *siginfo)
{
    uintptr_t address;
    struct guard_fault facts;
    if (!fault_address(signo, siginfo, &address) || !guard_fault_facts(address, &facts))
        return 0;
    if (format == BACKTRACE_REPORT_JSON)
        section_json(fd, &facts);
    else
        section_text(fd, &facts);
    return 1;
}
