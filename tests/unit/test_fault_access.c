/* The crash headline's access (issue 25): READ or WRITE from the page-
 * fault code, the size from the faulting instruction, EXECUTE for a jump
 * to a page that is not executable, nothing for a SIGSEGV sent by kill.
 * Each access is one x86-64 instruction in asm (so the compiler cannot
 * pick another form), run for real in a child against a page that does
 * not allow it; an alarm() in the child bounds it. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "support.h"
#include "crash_helpers.h"

#define HANG_BOUND 20 /* seconds: alarm() in each child */

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

typedef void access_function(void *page);

static void write_1(void *p) { __asm__ volatile("movb $1, (%0)" : : "r"(p) : "memory"); }
static void write_2(void *p) { __asm__ volatile("movw $1, (%0)" : : "r"(p) : "memory"); }
static void write_4(void *p) { __asm__ volatile("movl $1, (%0)" : : "r"(p) : "memory"); }
static void write_8(void *p) { __asm__ volatile("movq $1, (%0)" : : "r"(p) : "memory"); }
static void read_1(void *p) { __asm__ volatile("movzbl (%0), %%eax" : : "r"(p) : "rax", "memory"); }
static void read_2(void *p) { __asm__ volatile("movzwl (%0), %%eax" : : "r"(p) : "rax", "memory"); }
static void read_4(void *p) { __asm__ volatile("movl (%0), %%eax" : : "r"(p) : "rax", "memory"); }
static void read_8(void *p) { __asm__ volatile("movq (%0), %%rax" : : "r"(p) : "rax", "memory"); }
static void read_sse_16(void *p)
{
    __asm__ volatile("movdqu (%0), %%xmm0" : : "r"(p) : "xmm0", "memory");
}
static void write_sse_16(void *p)
{
    __asm__ volatile("movups %%xmm0, (%0)" : : "r"(p) : "memory");
}
static void write_avx_32(void *p)
{
    __asm__ volatile("vmovdqu %%ymm0, (%0)" : : "r"(p) : "memory");
}

/* rep movsq from a readable buffer into the page: one element, 8 bytes. */
static void rep_movs_8(void *p)
{
    static uint64_t source[4];
    void *from = source;
    uint64_t count = 4;
    __asm__ volatile("rep movsq" : "+D"(p), "+S"(from), "+c"(count) : : "memory");
}

/* A read-modify-write: the page-fault code calls it a write. */
static void add_4(void *p) { __asm__ volatile("addl $1, (%0)" : : "r"(p) : "memory"); }

struct access_case {
    const char *name;
    access_function *function;
    int protection;            /* of the page it touches */
    const char *expected;      /* the headline's end */
    int needs_avx;
};

static const struct access_case cases[] = {
    { "write_1", write_1, PROT_NONE, ", WRITE of size 1\n", 0 },
    { "write_2", write_2, PROT_NONE, ", WRITE of size 2\n", 0 },
    { "write_4", write_4, PROT_NONE, ", WRITE of size 4\n", 0 },
    { "write_8", write_8, PROT_NONE, ", WRITE of size 8\n", 0 },
    { "read_1", read_1, PROT_NONE, ", READ of size 1\n", 0 },
    { "read_2", read_2, PROT_NONE, ", READ of size 2\n", 0 },
    { "read_4", read_4, PROT_NONE, ", READ of size 4\n", 0 },
    { "read_8", read_8, PROT_NONE, ", READ of size 8\n", 0 },
    { "read_sse_16", read_sse_16, PROT_NONE, ", READ of size 16\n", 0 },
    { "write_sse_16", write_sse_16, PROT_READ, ", WRITE of size 16\n", 0 },
    { "write_avx_32", write_avx_32, PROT_NONE, ", WRITE of size 32\n", 1 },
    { "rep_movs_8", rep_movs_8, PROT_NONE, ", WRITE of size 8\n", 0 },
    { "add_4", add_4, PROT_READ, ", WRITE of size 4\n", 0 },
    /* Not readable either: the CPU still reports the instruction as a write. */
    { "add_4_no_access", add_4, PROT_NONE, ", WRITE of size 4\n", 0 },
};

static void touch_the_page(void *context)
{
    const struct access_case *access = context;
    alarm(HANG_BOUND);
    void *page = mmap(NULL, 4096, access->protection, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        _exit(98);
    install_or_exit(NULL);
    access->function(page);
    _exit(0);
}

Test(fault_access, each_access_says_its_direction_and_size, .timeout = 120)
{
    static struct child_result result;
    __builtin_cpu_init();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].needs_avx && !__builtin_cpu_supports("avx"))
            continue; /* the CPU (or the kernel) has no AVX: vmovdqu ymm is #UD */
        run_child(touch_the_page, (void *)&cases[i], &result);
        assert_died_by(&result, SIGSEGV);
        cr_assert(strstr(result.output, "(SEGV_ACCERR), fault address 0x") != NULL,
                  "%s: %s", cases[i].name, result.output);
        assert_in(result.output, cases[i].expected);
    }
}

static void jump_to_data(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(context);
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        _exit(98);
    page[0] = 0xc3; /* ret: it would return if the page could run */
    ((void (*)(void))(uintptr_t)page)();
    _exit(0);
}

Test(fault_access, a_jump_to_a_page_that_cannot_run_is_an_execute, .timeout = 30)
{
    static struct child_result result;
    run_child(jump_to_data, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "(SEGV_ACCERR), fault address 0x");
    assert_in(result.output, "000, EXECUTE\n");
    run_child(jump_to_data, "format=json", &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "\"access\":{\"direction\":\"EXECUTE\",\"size\":null}");
}

static void sent_by_kill(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit(context);
    kill(getpid(), SIGSEGV);
    _exit(0);
}

Test(fault_access, a_sigsegv_sent_by_kill_has_no_access, .timeout = 30)
{
    static struct child_result result;
    run_child(sent_by_kill, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "(SIGSEGV), code 0 (SI_USER), sent by pid ");
    const char *headline_end = strchr(result.output, '\n');
    cr_assert_not_null(headline_end);
    const char *of_size = strstr(result.output, " of size");
    const char *unknown = strstr(result.output, " of unknown size");
    cr_assert((of_size == NULL || of_size > headline_end) &&
              (unknown == NULL || unknown > headline_end), "%s", result.output);
    run_child(sent_by_kill, "format=json", &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "\"access\":null");
}

static void read_json(void *context)
{
    alarm(HANG_BOUND);
    install_or_exit("format=json");
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        _exit(98);
    (void)context;
    read_8(page);
    _exit(0);
}

Test(fault_access, the_json_report_has_the_access, .timeout = 30)
{
    static struct child_result result;
    run_child(read_json, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    assert_in(result.output, "\"access\":{\"direction\":\"READ\",\"size\":8}");
}
