/* Guard pages (guard_pages=1|before, sample=N), for real: the fixtures
 * (tests/fixtures/guard_access.c, guard_vector.cpp, linked with
 * -lexecinfo_ex_hooks) touch a guard page or a freed block's page in a
 * child; each test checks that it died by SIGSEGV at that access and that
 * the crash report leads with the heap error found at the access, in
 * ASan's order: the kind, READ or WRITE and the size, the block and the
 * offset, the access stack (frame 0 the function and line of the access,
 * marked in the fixture's source), freed by, allocated by, the SUMMARY
 * line naming that line and function; then the crash's own lines, its
 * trace left out (the access stack is that trace: nothing twice); no
 * frame of the hooks library anywhere. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <signal.h>

#include "support.h"

#define ACCESS_SOURCE "tests/fixtures/guard_access.c"
#define VECTOR_SOURCE "tests/fixtures/guard_vector.cpp"

static void set_options(void *context)
{
    unsetenv("LIBC_HOOKS_ENABLE");
    setenv("EXECINFO_EX_OPTIONS", context, 1);
}

static void run_fixture(const char *options, char *const *arguments, struct child_result *result)
{
    char program[512];
    snprintf(program, sizeof program, "%s/%s", getenv("EXECINFO_EX_TESTS"), arguments[0]);
    char *argv[8] = { program };
    for (int i = 1; i < 7 && arguments[i] != NULL; i++)
        argv[i] = arguments[i];
    run_program(program, argv, set_options, (void *)options, result);
}

static void assert_in(const char *text, const char *needle)
{
    cr_assert(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

/* NEEDLE's place in TEXT, asserted found at or after AFTER_THIS; returns
 * the end of the line it is on. */
static const char *line_after(const char *text, const char *after_this, const char *needle)
{
    const char *found = strstr(after_this, needle);
    cr_assert_not_null(found, "'%s' missing or out of order in:\n%s", needle, text);
    const char *end = strchr(found, '\n');
    return end != NULL ? end + 1 : found + strlen(found);
}

/* What a report of one access must say. */
struct expected {
    const char *kind;          /* "heap-buffer-overflow" ... */
    const char *access;        /* "READ of size 8" */
    const char *function;      /* frame 0 of the access stack and the SUMMARY's */
    const char *source;        /* the file the function is in, as the line table names it */
    int line;
    long offset;               /* the address's offset in the block */
    int freed;                 /* a "freed by" stack comes before "allocated by" */
};

/* The report in RESULT, in order, as struct expected says. */
static void assert_guard_report(const struct child_result *result, const struct expected *want)
{
    const char *text = result->output;
    char needle[512];
    assert_died_by(result, SIGSEGV);
    snprintf(needle, sizeof needle, "*** execinfo_ex: heap error: %s at 0x", want->kind);
    cr_assert(strncmp(text, needle, strlen(needle)) == 0, "the report does not lead with '%s':\n%s",
              needle, text);
    const char *at = line_after(text, text, " (found at the access)\n");
    snprintf(needle, sizeof needle, "*** %s\n", want->access);
    cr_assert(strncmp(at, needle, strlen(needle)) == 0, "no '%s' on line 2:\n%s", needle, text);
    snprintf(needle, sizeof needle, " bytes; the address is at offset %ld ", want->offset);
    at = line_after(text, at, needle);
    at = line_after(text, at, "*** access by thread ");
    /* Frame 0: the function, at the marked line (a macro's functions are
     * on one line: their name tells them apart). */
    const char *frame0_end = strchr(at, '\n');
    cr_assert_not_null(frame0_end, "%s", text);
    snprintf(needle, sizeof needle, "(%s+0", want->function);
    const char *named = strstr(at, needle);
    cr_assert(named != NULL && named < frame0_end, "frame 0 is not %s:\n%s", want->function, text);
    snprintf(needle, sizeof needle, "] at %s:%d\n", want->source, want->line);
    cr_assert(strncmp(frame0_end + 1 - strlen(needle), needle, strlen(needle)) == 0,
              "frame 0 is not at %s:%d:\n%s", want->source, want->line, text);
    if (want->freed)
        at = line_after(text, at, "*** freed by thread ");
    at = line_after(text, at, "*** allocated by thread ");
    snprintf(needle, sizeof needle, "SUMMARY: execinfo_ex: %s %s:%d in %s", want->kind,
             want->source, want->line, want->function);
    at = line_after(text, at, needle);
    at = line_after(text, at, "*** end of heap report\n");
    snprintf(needle, sizeof needle, "*** execinfo_ex: fatal signal 11 (SIGSEGV), code 2 "
             "(SEGV_ACCERR), fault address 0x");
    at = line_after(text, at, needle);
    at = line_after(text, at, "*** backtrace: left out (the heap error above says where)\n");
    line_after(text, at, "*** end of report");
    /* Nothing twice, none of ours. */
    cr_assert_eq(count_of(text, "*** access by thread "), 1, "%s", text);
    cr_assert_eq(count_of(text, "*** allocated by thread "), 1, "%s", text);
    cr_assert_eq(count_of(text, "*** freed by thread "), want->freed, "%s", text);
    cr_assert_null(strstr(text, "*** backtrace ("), "%s", text);
    cr_assert_null(strstr(text, "libexecinfo_ex_hooks"), "%s", text);
}

struct size_case {
    const char *size;          /* the fixture's name for it */
    int bytes;
    const char *source;        /* where its access is marked: NULL, ACCESS_SOURCE */
    int (*supported)(void);    /* whether this CPU has it: NULL, always */
};

static const struct size_case sizes[] = {
    { "1", 1, NULL, NULL }, { "2", 2, NULL, NULL }, { "4", 4, NULL, NULL }, { "8", 8, NULL, NULL },
    { "16", 16, NULL, NULL }, /* the compiler's own 16-byte move */
};

/* The architecture's vector moves (guard_moves_ARCH.h): arch_moves[]. */
#include "guard_moves.h"

static const char *const wheres[] = { "overflow", "underflow", "after_free" };
static const char *const hows[] = { "read", "write" };

/* guard_access WHERE HOW SIZE under the options WHERE needs, checked. */
static void check_access(const char *where, const char *how, const struct size_case *size)
{
    static struct child_result result;
    int underflow = strcmp(where, "underflow") == 0, after_free = strcmp(where, "after_free") == 0;
    const char *source = size->source != NULL ? size->source : ACCESS_SOURCE;
    char *arguments[] = { "guard_access", (char *)where, (char *)how, (char *)size->size, NULL };
    run_fixture(underflow ? "guard_pages=before" : "guard_pages=1", arguments, &result);
    char function[32], mark[40], access[40];
    snprintf(function, sizeof function, "%s_%s", how, size->size);
    snprintf(mark, sizeof mark, "@%s", function);
    snprintf(access, sizeof access, "%s of size %d", strcmp(how, "read") == 0 ? "READ" : "WRITE",
             size->bytes);
    struct expected want = {
        .kind = after_free ? "heap-use-after-free"
                : underflow ? "heap-buffer-underflow" : "heap-buffer-overflow",
        .access = access, .function = function, .source = source,
        .line = marked_line(source, mark),
        .offset = after_free ? 0 : underflow ? -size->bytes : 64,
        .freed = after_free,
    };
    cr_assert_gt(want.line, 0, "no %s in %s", mark, source);
    assert_guard_report(&result, &want);
}

static void check_where(const char *where, const char *how)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_access(where, how, &sizes[i]);
}

Test(guard_pages, reads_past_the_end_fault_at_the_access, .timeout = 120)
{
    check_where("overflow", "read");
}

Test(guard_pages, writes_past_the_end_fault_at_the_access, .timeout = 120)
{
    check_where("overflow", "write");
}

Test(guard_pages, reads_before_the_start_fault_with_before, .timeout = 120)
{
    check_where("underflow", "read");
}

Test(guard_pages, writes_before_the_start_fault_with_before, .timeout = 120)
{
    check_where("underflow", "write");
}

Test(guard_pages, reads_after_free_fault_at_the_access, .timeout = 120)
{
    check_where("after_free", "read");
}

Test(guard_pages, writes_after_free_fault_at_the_access, .timeout = 120)
{
    check_where("after_free", "write");
}

/* Every place and direction with each of the architecture's vector
 * moves; one the CPU lacks is skipped, said (as information: Criterion
 * exits 1 after a warning, and a CPU without AVX-512 is no failure). */
Test(guard_pages, vector_moves_fault_at_the_access_with_their_size, .timeout = 240)
{
    int ran = 0;
    for (size_t i = 0; i < sizeof arch_moves / sizeof arch_moves[0]; i++) {
        const struct size_case *move = &arch_moves[i];
        if (move->supported != NULL && !move->supported()) {
            cr_log_info("this CPU (or its kernel) has no %s: its %d-byte move is not tried",
                        move->size, move->bytes);
            continue;
        }
        for (size_t w = 0; w < sizeof wheres / sizeof wheres[0]; w++)
            for (size_t h = 0; h < sizeof hows / sizeof hows[0]; h++)
                check_access(wheres[w], hows[h], move);
        ran++;
    }
    cr_assert_gt(ran, 0, "no vector move of this architecture could run");
}

/* Issue 25's program: the read of first.price (8 bytes) after push_back
 * freed the array under the reference. */
static struct expected vector_expected(void)
{
    struct expected want = {
        .kind = "heap-use-after-free", .access = "READ of size 8",
        .function = "process(std::vector<Order, std::allocator<Order> >&)",
        .source = VECTOR_SOURCE, .line = marked_line(VECTOR_SOURCE, "@access"),
        .offset = 8, .freed = 1,
    };
    cr_assert_gt(want.line, 0);
    return want;
}

Test(guard_pages, a_vector_reference_kept_across_push_back_faults_as_use_after_free, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_vector", NULL };
    run_fixture("guard_pages=1", arguments, &result);
    struct expected want = vector_expected();
    assert_guard_report(&result, &want);
}

/* The same in JSON: one "heap_error" member, found at the access, its
 * access and access stack, the crash's own frames left out, no frame of
 * the hooks library in any stack. */
Test(guard_pages, a_vector_reference_kept_across_push_back_in_json, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_vector", NULL };
    run_fixture("guard_pages=1:format=json", arguments, &result);
    assert_died_by(&result, SIGSEGV);
    struct expected want = vector_expected();
    char path[64], command[2048];
    snprintf(path, sizeof path, "/tmp/execinfo_ex_guard_json_%d", (int)getpid());
    FILE *file = fopen(path, "w");
    cr_assert_not_null(file);
    fputs(result.output, file);
    fclose(file);
    snprintf(command, sizeof command,
             "python3 -c 'import json,sys\n"
             "d = json.load(open(\"%s\")); e = d[\"heap_error\"]\n"
             "stacks = [e[k][\"frames\"] for k in (\"access_stack\", \"freed\", \"allocated\")]\n"
             "top = stacks[0][0]\n"
             "ok = (e[\"kind\"] == \"heap-use-after-free\" and e[\"found\"] == \"at the access\"\n"
             "  and e[\"access\"] == {\"direction\": \"READ\", \"size\": 8}\n"
             "  and d[\"access\"] == e[\"access\"] and e[\"offset\"] == 8\n"
             "  and top[\"function\"] == \"%s\" and top[\"line\"] == %d\n"
             "  and top[\"file\"] == \"%s\" and e[\"here\"] is None\n"
             "  and e[\"summary\"] == \"heap-use-after-free %s:%d in %s\"\n"
             "  and d[\"backtrace_left_out\"] is True and d[\"frames\"] == []\n"
             "  and not any(\"libexecinfo_ex_hooks\" in (f.get(\"module\") or \"\")\n"
             "              for s in stacks for f in s))\n"
             "sys.exit(0 if ok else 1)'",
             path, want.function, want.line, want.source, want.source, want.line, want.function);
    int status = system(command);
    unlink(path);
    cr_assert_eq(status, 0, "%s", result.output);
}

/* One set of facts, two renderers: the text and the JSON of a guard
 * page's fault say the same (tests/tools/heap_report_facts.py), the
 * access and the first frame of its stack included. */
Test(guard_pages, text_and_json_of_a_guard_fault_carry_the_same_facts, .timeout = 60)
{
    static const char *const cases[][3] = {
        { "overflow", "write", "8" }, { "after_free", "read", "16" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static struct child_result text, json;
        char *arguments[] = { "guard_access", (char *)cases[i][0], (char *)cases[i][1],
                              (char *)cases[i][2], NULL };
        run_fixture("guard_pages=1", arguments, &text);
        run_fixture("guard_pages=1:format=json", arguments, &json);
        assert_died_by(&text, SIGSEGV);
        assert_died_by(&json, SIGSEGV);
        static char verdict[1 << 14];
        cr_assert(heap_facts_agree(text.output, json.output, verdict, sizeof verdict),
                  "%s %s %s: text and JSON differ:\n%s", cases[i][0], cases[i][1], cases[i][2],
                  verdict);
        cr_assert_not_null(strstr(verdict, "\"access_stack\": \""), "%s", verdict);
    }
}

Test(guard_pages, sample_1000_finds_one_of_10000_reads_after_free, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_access", "uaf_loop", NULL };
    run_fixture("sample=1000:sample_seed=7", arguments, &result);
    assert_died_by(&result, SIGSEGV);
    const char *error = strstr(result.output, "*** execinfo_ex: heap error: heap-use-after-free");
    cr_assert_not_null(error, "%s", result.output);
    assert_in(error, "*** freed by thread ");
    assert_in(error, "uaf_loop");
    /* The access is the loop's read: the fault decoder says READ. */
    assert_in(result.output, "READ");
    /* heap=0 otherwise: no other heap section. */
    cr_assert_null(strstr(result.output, "*** heap: guards of every block"), "%s", result.output);
}

/* A report of KIND found at the access whose line the fixture printed
 * ("line FUNCTION N" on stdout, before it): frame 0 of the access stack
 * is FUNCTION at that line of guard_access.c. */
static void assert_fault_in(const struct child_result *result, const char *kind,
                            const char *source)
{
    const char *text = result->output;
    char function[64], needle[256];
    int line;
    assert_died_by(result, SIGSEGV);
    const char *said = strstr(text, "line ");
    cr_assert(said != NULL && sscanf(said, "line %63s %d", function, &line) == 2, "%s", text);
    snprintf(needle, sizeof needle, "*** execinfo_ex: heap error: %s at 0x", kind);
    const char *at = line_after(text, text, needle);
    at = line_after(text, at, "*** access by thread ");
    const char *frame0_end = strchr(at, '\n');
    cr_assert_not_null(frame0_end, "%s", text);
    snprintf(needle, sizeof needle, "(%s+0", function);
    const char *named = strstr(at, needle);
    cr_assert(named != NULL && named < frame0_end, "frame 0 is not %s:\n%s", function, text);
    snprintf(needle, sizeof needle, "] at %s:%d\n", source, line);
    cr_assert(strncmp(frame0_end + 1 - strlen(needle), needle, strlen(needle)) == 0,
              "frame 0 is not at %s:%d:\n%s", source, line, text);
    snprintf(needle, sizeof needle, "SUMMARY: execinfo_ex: %s %s:%d in %s", kind, source, line,
             function);
    line_after(text, at, needle);
}

static void assert_fault_at_access(const struct child_result *result, const char *kind)
{
    assert_fault_in(result, kind, ACCESS_SOURCE);
}

/* Aligned allocations are sampled too, at their alignment (sample=1:
 * every allocation), and their reads after free are found. */
/* Nine crashes: under qemu-user each is about 4 s on a loaded machine
 * (the cold crash path translated), so the bound is 120 s. */
Test(guard_pages, sampled_aligned_blocks_keep_their_alignment, .timeout = 120)
{
    static const char *const functions[] = { "posix_memalign", "aligned_alloc", "memalign" };
    static const char *const alignments[] = { "32", "256", "4096" };
    for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++) {
        for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++) {
            static struct child_result result;
            char *arguments[] = { "guard_access", "aligned", (char *)functions[f],
                                  (char *)alignments[a], NULL };
            run_fixture("sample=1:sample_seed=5", arguments, &result);
            assert_fault_at_access(&result, "heap-use-after-free");
            assert_in(result.output, "READ");
        }
    }
}

/* sample_slots bounds the guarded blocks; a sample that finds every slot
 * taken goes to glibc, silently (no budget message, as guard_pages has). */
Test(guard_pages, samples_beyond_the_slots_go_to_glibc_silently, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_access", "live", "50", NULL };
    run_fixture("sample=1:sample_slots=4:sample_seed=9", arguments, &result);
    assert_exited_with(&result, 0);
    cr_assert_str_eq(result.output, "ok\n");
}

Test(guard_pages, a_spent_budget_falls_back_to_ordinary_guards_said_once, .timeout = 60)
{
    static struct child_result result;
    char *arguments[] = { "guard_access", "live", "50", NULL };
    run_fixture("guard_pages=1:guard_pages_budget=10", arguments, &result);
    assert_exited_with(&result, 0);
    assert_in(result.output, "ok\n");
    cr_assert_eq(count_of(result.output, "guard_pages_budget"), 1, "%s", result.output);
}

Test(guard_pages, ordinary_use_is_unchanged, .timeout = 60)
{
    static const char *const options[] = { "guard_pages=1", "guard_pages=before",
                                           "sample=1:sample_seed=3", "heap=0" };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_access", "churn", NULL };
        run_fixture(options[i], arguments, &result);
        assert_exited_with(&result, 0);
        assert_in(result.output, "ok 14000 abcdefg\n");
        cr_assert_null(strstr(result.output, "heap error"), "%s: %s", options[i], result.output);
    }
}

/* The leak check's lines ("Direct leak of...", "Indirect leak of...") of
 * leak_program SCENARIO under OPTIONS, preloaded. */
static void leak_lines(const char *options, const char *scenario, char *lines, size_t capacity)
{
    static struct child_result result;
    char program[512];
    snprintf(program, sizeof program, "%s/leak_program", getenv("EXECINFO_EX_TESTS"));
    char preload[600];
    snprintf(preload, sizeof preload, "%s/libexecinfo_ex_hooks.so", getenv("EXECINFO_EX_BUILD"));
    setenv("LD_PRELOAD", preload, 1);
    char *argv[] = { program, (char *)scenario, NULL };
    run_program(program, argv, set_options, (void *)options, &result);
    unsetenv("LD_PRELOAD");
    size_t used = 0;
    lines[0] = '\0';
    for (const char *line = result.output; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, "Direct leak", 11) == 0 || strncmp(line, "Indirect leak", 13) == 0) {
            cr_assert(used + length + 1 < capacity);
            memcpy(lines + used, line, length);
            used += length;
            lines[used++] = '\n';
            lines[used] = '\0';
        }
        line = end != NULL ? end + 1 : NULL;
    }
}

Test(guard_pages, guarded_blocks_are_in_the_leak_check, .timeout = 120)
{
    static char plain[8192], guarded[8192];
    static const char *const scenarios[] = { "list", "cycle", "global" };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        leak_lines("leak_check=1", scenarios[i], plain, sizeof plain);
        leak_lines("leak_check=1:guard_pages=1", scenarios[i], guarded, sizeof guarded);
        cr_assert_str_eq(guarded, plain, "%s", scenarios[i]);
    }
    cr_assert(strstr(plain, "Direct leak") == NULL); /* global: nothing leaked */
    leak_lines("leak_check=1:guard_pages=1", "list", guarded, sizeof guarded);
    cr_assert_not_null(strstr(guarded, "Indirect leak"), "%s", guarded);
}

/* ---- the program owns SIGSEGV, or the crash lead (docs/DECISIONS.md,
 * "A guard page's fault when the program owns SIGSEGV") ---- */

#define OWNER_SOURCE "tests/fixtures/guard_owner.c"
#define OWNER_NOTICE "execinfo_ex: the program replaced the crash report's SIGSEGV handler"

static const char *const guarding[] = { "guard_pages=1", "sample=1:sample_seed=11" };

/* A handler that passes the signal on: the whole report, after what the
 * program's handler wrote, the notice said once before. */
Test(guard_pages, a_program_handler_that_chains_gets_the_whole_report, .timeout = 60)
{
    for (size_t i = 0; i < sizeof guarding / sizeof guarding[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_owner", "chain", NULL };
        run_fixture(guarding[i], arguments, &result);
        assert_fault_in(&result, "heap-use-after-free", OWNER_SOURCE);
        const char *text = result.output;
        const char *at = line_after(text, text, OWNER_NOTICE);
        at = line_after(text, at, "own handler\n");
        at = line_after(text, at, "*** execinfo_ex: heap error: heap-use-after-free at 0x");
        at = line_after(text, at, "*** freed by thread ");
        line_after(text, at, "*** backtrace: left out (the heap error above says where)\n");
        cr_assert_eq(count_of(text, OWNER_NOTICE), 1, "%s: %s", guarding[i], text);
        cr_assert_null(strstr(text, "not stopped"), "%s", text);
    }
}

/* A handler that does not: the program decides how it ends; ours never
 * runs, and the notice, said when the handler was put in, is all the
 * program's user gets from us. */
Test(guard_pages, a_program_handler_that_does_not_chain_decides_the_end_after_the_notice,
     .timeout = 60)
{
    for (size_t i = 0; i < sizeof guarding / sizeof guarding[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_owner", "default", NULL };
        run_fixture(guarding[i], arguments, &result);
        assert_died_by(&result, SIGSEGV);
        const char *text = result.output;
        const char *at = line_after(text, text, OWNER_NOTICE);
        line_after(text, at, "own handler\n");
        cr_assert_eq(count_of(text, OWNER_NOTICE), 1, "%s: %s", guarding[i], text);
        cr_assert_null(strstr(text, "*** execinfo_ex"), "%s: %s", guarding[i], text);
        cr_assert_null(strstr(text, "not stopped"), "%s", text);

        char *exits[] = { "guard_owner", "exit", NULL };
        run_fixture(guarding[i], exits, &result);
        assert_exited_with(&result, 42);
        at = line_after(result.output, result.output, OWNER_NOTICE);
        line_after(result.output, at, "own handler\n");
        cr_assert_null(strstr(result.output, "*** execinfo_ex"), "%s", result.output);
    }
}

/* Without guard pages there is no guard page's fault to lose: no notice. */
Test(guard_pages, a_program_handler_without_guard_pages_gets_no_notice, .timeout = 60)
{
    static const char *const options[] = { "heap=0", "heap=1" };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_owner", "exit", NULL };
        run_fixture(options[i], arguments, &result);
        cr_assert_null(strstr(result.output, OWNER_NOTICE), "%s: %s", options[i], result.output);
    }
}

/* The program's own crash lead in the hooks' place: it comes first and
 * keeps the trace; the guard page's fault is still reported whole, with
 * the same facts, in the heap section after the trace. */
Test(guard_pages, a_program_crash_lead_comes_first_and_the_fault_follows_the_trace,
     .timeout = 60)
{
    for (size_t i = 0; i < sizeof guarding / sizeof guarding[0]; i++) {
        static struct child_result result;
        char *arguments[] = { "guard_owner", "lead", NULL };
        run_fixture(guarding[i], arguments, &result);
        assert_fault_in(&result, "heap-use-after-free", OWNER_SOURCE);
        const char *text = result.output;
        const char *at = line_after(text, text, "own lead\n");
        at = line_after(text, at, "*** execinfo_ex: fatal signal 11 (SIGSEGV)");
        at = line_after(text, at, "*** backtrace (");
        at = line_after(text, at, "(use_after_free+0x");
        at = line_after(text, at, "*** execinfo_ex: heap error: heap-use-after-free at 0x");
        at = line_after(text, at, "*** freed by thread ");
        at = line_after(text, at, "*** allocated by thread ");
        line_after(text, at, "*** end of report");
        cr_assert_eq(count_of(text, "*** execinfo_ex: heap error: "), 1, "%s", text);
        cr_assert_null(strstr(text, OWNER_NOTICE), "%s", text);
    }
}
