/* heap_inspect.c: the heap as the crash handler and a debugging user see
 * it: which block owns an address, and every guard checked now.
 * World: signal-safe (the block set walked without locks, headers
 * validated by their check words, the writer on a stack buffer).
 *
 * The fatal handler calls in through the crash callback: a SIGSEGV or
 * SIGBUS report names the block at or near the fault address, and every
 * report lists the blocks whose guards are damaged, so that a crash
 * "for another reason" still shows the overflow that caused it. */
#define _GNU_SOURCE
#include "heap.h"
#include "block_set.h"
#include "heap_report.h"
#include "guard_fault.h"
#include "quarantine.h"
#include "../base/json_out.h"
#include "../base/text_out.h"
#include "execinfo_ex.h"

#include <signal.h>

#define NEAR_BYTES 4096           /* how far outside a block still names it */

static _Atomic int scans;         /* walks running now, in any thread */

void heap_scan_begin(void)
{
    __atomic_fetch_add(&scans, 1, __ATOMIC_SEQ_CST);
    /* The walk's loads of the block set stay after the count (Dekker with
     * heap_wait_for_scans; needed on weakly ordered machines). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void heap_scan_end(void)
{
    __atomic_fetch_sub(&scans, 1, __ATOMIC_SEQ_CST);
}

int heap_scans_running(void)
{
    return __atomic_load_n(&scans, __ATOMIC_SEQ_CST);
}

void heap_scans_forget(void)
{
    __atomic_store_n(&scans, 0, __ATOMIC_SEQ_CST);
}

struct nearest {
    uintptr_t address;
    uintptr_t block;
    struct block_facts facts;
    uintptr_t distance;           /* 0: inside */
};

/* Outside distance of ADDRESS from [block, block + size). */
static uintptr_t distance_to(uintptr_t address, uintptr_t block, size_t size)
{
    if (address < block)
        return block - address;
    if (address - block < size + (size == 0))
        return 0;
    return address - (block + size) + 1;
}

static int closer_block(uintptr_t block, void *context)
{
    struct nearest *nearest = context;
    struct block_facts facts;
    if (!block_read(&heap.layout, block, &facts))
        return 0;
    uintptr_t distance = distance_to(nearest->address, block, facts.size);
    if (distance <= NEAR_BYTES && (nearest->block == 0 || distance < nearest->distance)) {
        nearest->block = block;
        nearest->facts = facts;
        nearest->distance = distance;
    }
    return 0;
}

/* Only the block before ADDRESS can hold it; those starting up to
 * NEAR_BYTES after it can be near. */
static void find_nearest(struct nearest *nearest)
{
    uintptr_t before = block_set_last_at_or_before(nearest->address);
    if (before != 0)
        closer_block(before, nearest);
    block_set_each_in(nearest->address + 1, nearest->address + NEAR_BYTES + 1, closer_block,
                      nearest);
}

/* A block as the scans name it, every fact gathered once (the free stack
 * looked up in the quarantine once), for the text and the JSON renderer
 * alike. */
struct block_report {
    const char *kind;             /* "inside", "near", or the error's name */
    uintptr_t address;            /* the address asked about, or the damaged byte */
    uintptr_t block;
    size_t size;
    int freed;                    /* not live (freed, or being freed) */
    long offset;                  /* address - block */
    stack_id alloc_stack;
    stack_id free_stack;          /* 0 unless the quarantine still has it */
};

static void block_report_fill(struct block_report *report, const char *kind, uintptr_t block,
                              const struct block_facts *facts, uintptr_t address)
{
    *report = (struct block_report){
        .kind = kind, .address = address, .block = block, .size = facts->size,
        .freed = facts->state != BLOCK_LIVE, .offset = (long)(address - block),
        .alloc_stack = facts->alloc_stack,
    };
    struct quarantined freed;
    if (facts->state == BLOCK_FREED && quarantine_find(block, &freed))
        report->free_stack = freed.free_stack;
}

/* The stacks, in the text renderers. */
static void text_stacks(struct text_out *out, int fd, const struct block_report *report)
{
    heap_report_stack(out, fd, "allocated", report->alloc_stack);
    heap_report_stack(out, fd, "freed", report->free_stack);
    text_out_flush(out);
}

/* "*** ADDRESS is at offset N inside a live 24-byte block at B", or
 * "... N bytes past the end of ..." / "... before the start of ...". */
static void fault_block_text(struct text_out *out, int fd, const struct block_report *report)
{
    text_out_string(out, "*** ");
    heap_report_hex(out, report->address);
    if (report->kind[0] == 'i') {
        text_out_string(out, " is at offset ");
        heap_report_signed(out, report->offset);
        text_out_string(out, " inside");
    } else {
        text_out_char(out, ' ');
        text_out_decimal(out, report->offset < 0 ? (uint64_t)-report->offset
                                                 : (uint64_t)report->offset - report->size);
        text_out_string(out, report->offset < 0 ? " bytes before the start of"
                                                : " bytes past the end of");
    }
    text_out_string(out, report->freed ? " a freed " : " a live ");
    text_out_decimal(out, report->size);
    text_out_string(out, "-byte block at ");
    heap_report_hex(out, report->block);
    text_out_string(out, "\n");
    text_stacks(out, fd, report);
}

/* "*** heap-buffer-overflow: live 24-byte block at B, damaged at offset N" */
static void damaged_block_text(struct text_out *out, int fd, const struct block_report *report)
{
    text_out_string(out, "*** ");
    text_out_string(out, report->kind);
    text_out_string(out, ": ");
    text_out_string(out, report->freed ? "freed " : "live ");
    text_out_decimal(out, report->size);
    text_out_string(out, "-byte block at ");
    heap_report_hex(out, report->block);
    text_out_string(out, ", damaged at offset ");
    heap_report_signed(out, report->offset);
    text_out_char(out, '\n');
    text_stacks(out, fd, report);
}

/* {"kind":...,"block":...,"size":N,"state":"live"|"freed","offset":N,
 *  "allocated":...[,"freed":...]}: either kind of block report. */
static void block_json(struct text_out *out, int fd, const struct block_report *report)
{
    text_out_char(out, '{');
    json_key(out, "kind", 1);
    json_string(out, report->kind);
    json_key(out, "block", 0);
    json_hex(out, report->block);
    json_key(out, "size", 0);
    text_out_decimal(out, report->size);
    json_key(out, "state", 0);
    json_string(out, report->freed ? "freed" : "live");
    json_key(out, "offset", 0);
    json_signed(out, report->offset);
    heap_report_json_stack(out, fd, "allocated", report->alloc_stack);
    if (report->free_stack != 0)
        heap_report_json_stack(out, fd, "freed", report->free_stack);
    text_out_char(out, '}');
}

static void fault_block_fill(struct block_report *report, const struct nearest *near)
{
    block_report_fill(report, near->distance == 0 ? "inside" : "near", near->block, &near->facts,
                      near->address);
}

__attribute__((visibility("default")))
int backtrace_heap_describe(const void *address, int fd)
{
    if (!heap.recording)
        return -1;
    struct nearest near = { .address = (uintptr_t)address };
    heap_scan_begin();
    find_nearest(&near);
    if (near.block == 0) {
        heap_scan_end();
        return 0;
    }
    char buffer[512];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    struct block_report report;
    fault_block_fill(&report, &near);
    fault_block_text(&out, fd, &report);
    heap_scan_end();
    return 1;
}

struct guard_check {
    struct text_out *out;
    int fd;
    int damaged;
    int json;
    uintptr_t named;    /* the block the heap error above named: not listed twice */
};

static void damaged_line(struct guard_check *check, enum heap_error kind, uintptr_t block,
                         const struct block_facts *facts, long offset)
{
    struct block_report report;
    block_report_fill(&report, heap_error_name(kind), block, facts, block + (uintptr_t)offset);
    if (check->json) {
        if (check->damaged > 0)
            text_out_char(check->out, ',');
        block_json(check->out, check->fd, &report);
        text_out_end_line(check->out);
    } else {
        damaged_block_text(check->out, check->fd, &report);
    }
    check->damaged++;
}

static int check_guards(uintptr_t block, void *context)
{
    struct guard_check *check = context;
    struct block_facts facts;
    if (!block_read(&heap.layout, block, &facts))
        return 0; /* being handed out or back right now; the set is read unlocked */
    if (check->named != 0 && block == check->named)
        return 0;
    long damage;
    if (block_guards_damaged(&heap.layout, block, facts.size, &damage))
        damaged_line(check, damage < 0 ? HEAP_UNDERFLOW : HEAP_OVERFLOW, block, &facts, damage);
    size_t changed;
    if (facts.state == BLOCK_FREED &&
        block_fill_changed(block, facts.size, heap.options.fill_max, heap.options.free_fill,
                           &changed))
        damaged_line(check, HEAP_USE_AFTER_FREE, block, &facts, (long)changed);
    return 0;
}

/* The damaged blocks as text, but block NAMED (0: none). */
static int guard_scan_text(int fd, uintptr_t named)
{
    char buffer[512];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    struct guard_check check = { &out, fd, 0, 0, named };
    heap_scan_begin();
    block_set_each(check_guards, &check);
    heap_scan_end();
    text_out_flush(&out);
    return check.damaged;
}

__attribute__((visibility("default")))
int backtrace_heap_check(int fd)
{
    if (!heap.recording)
        return -1;
    return guard_scan_text(fd, 0);
}

/* In a JSON crash report: ,"heap_fault_block":{...}|null,"heap_damaged":[...] */
static void json_crash_members(int fd, int signo, const void *siginfo, uintptr_t named)
{
    char buffer[512];
    struct text_out out;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    json_key(&out, "heap_fault_block", 0);
    struct nearest near = { 0 };
    heap_scan_begin();
    if (guard_fault_address(signo, siginfo, &near.address))
        find_nearest(&near);
    if (near.block != 0) {
        struct block_report report;
        fault_block_fill(&report, &near);
        block_json(&out, fd, &report);
    } else
        text_out_string(&out, "null");
    json_key(&out, "heap_damaged", 0);
    text_out_char(&out, '[');
    struct guard_check check = { &out, fd, 0, 1, named };
    block_set_each(check_guards, &check);
    heap_scan_end();
    text_out_char(&out, ']');
    text_out_flush(&out);
}

/* What the lead wrote, for the heap section of the same report (set and
 * read by the one reporting thread): the block its heap error named,
 * which the guard scan then leaves out, and whether it was a guard
 * page's fault. */
static uintptr_t lead_named_block;
static int lead_guard_fault;

/* The crash report's lead (backtrace_set_crash_lead):
 * - a guard page's fault (guard_pages=1, sample=N) is a heap error found
 *   at the access: its report, access stack included, comes first, and
 *   the crash's own trace, the same frames, is left out (nothing twice);
 * - else a heap error held for the abort that follows it comes first,
 *   and that abort's own trace, the hooks' frames down to abort(), is
 *   left out. Another signal (another thread crashed while the error
 *   waited) keeps its trace: it is the program's. */
int heap_crash_lead(int fd, int format, int signo, const void *siginfo, const void *ucontext,
                    void *context)
{
    (void)context;
    lead_guard_fault = guard_fault_report(fd, format, signo, siginfo, ucontext);
    if (lead_guard_fault)
        return BACKTRACE_LEAD_LEAVE_OUT_TRACE;
    if (!heap.recording)
        return BACKTRACE_LEAD_KEEP_TRACE;
    if (!heap_report_pending(fd, format, signo, &lead_named_block))
        return BACKTRACE_LEAD_KEEP_TRACE;
    return signo == SIGABRT ? BACKTRACE_LEAD_LEAVE_OUT_TRACE : BACKTRACE_LEAD_KEEP_TRACE;
}

/* A guard page's fault, said by the lead or, when the program replaced
 * our lead with its own, here. */
static int guard_fault_said(int fd, int format, int signo, const void *siginfo,
                            const void *ucontext)
{
    int said = lead_guard_fault;
    lead_guard_fault = 0;
    return said || guard_fault_report(fd, format, signo, siginfo, ucontext);
}

/* The fatal handler's callback: the block of the fault address and the
 * damaged guards, in the report's format. */
void heap_crash_section(int fd, int format, int signo, const void *siginfo,
                               const void *ucontext, void *context)
{
    (void)context;
    int guarded = guard_fault_said(fd, format, signo, siginfo, ucontext);
    if (!heap.recording)
        return; /* sample=N: nothing else is recorded */
    /* A held error the lead did not write (the program replaced our
     * lead). In JSON not after a guard fault's: one "heap_error" member. */
    uintptr_t named;
    if ((guarded && format == BACKTRACE_REPORT_JSON) ||
        !heap_report_pending(fd, format, signo, &named))
        named = lead_named_block;
    lead_named_block = 0;
    if (format == BACKTRACE_REPORT_JSON) {
        json_crash_members(fd, signo, siginfo, named);
        return;
    }
    const siginfo_t *info = siginfo;
    char buffer[256];
    struct text_out out;
    uintptr_t address;
    text_out_init_fd(&out, fd, buffer, sizeof buffer);
    if (guarded) {
        /* said above */
    } else if (guard_fault_address(signo, siginfo, &address)) {
        text_out_string(&out, "*** heap: the fault address\n");
        text_out_flush(&out);
        if (backtrace_heap_describe((void *)address, fd) == 0) {
            text_out_string(&out, "*** is in no heap block nor near one\n");
            text_out_flush(&out);
        }
    } else if ((signo == SIGSEGV || signo == SIGBUS) && info != NULL && info->si_code == SI_KERNEL) {
        text_out_string(&out, "*** heap: the fault address is unknown (SI_KERNEL): no block can "
                              "be named for it; see the hints above\n");
        text_out_flush(&out);
    }
    text_out_string(&out, "*** heap: guards of every block\n");
    text_out_flush(&out);
    int damaged = guard_scan_text(fd, named);
    text_out_string(&out, damaged == 0 ? "*** all intact\n" : "*** end of damaged blocks\n");
    text_out_flush(&out);
}
