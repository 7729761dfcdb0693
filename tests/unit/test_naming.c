/* Which function a frame is named by (issue 11, items 1 to 4): bare
 * addresses and interrupted pcs exactly, as glibc names them; return
 * addresses by their call; a call through NULL walked on to its caller;
 * a global name over a compiler-made alias; a fully static program. */
#include "support.h"
#include "crash_helpers.h"

#include <dlfcn.h>
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>

#define PACKED_COUNT 8

static const char *const packed_names[PACKED_COUNT] = {
    "packed_add_one", "packed_triple",    "packed_less_seven", "packed_flip",
    "packed_quadruple", "packed_halve",   "packed_invert",     "packed_write_first",
};

static void *open_packed_library(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/packed_functions.so", getenv("EXECINFO_EX_TESTS"));
    void *library = dlopen(path, RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    /* Indexed now, for the signal-safe calls (test_dlopen.c tests that a
     * dlopen alone is enough). */
    cr_assert_eq(backtrace_refresh_index(), 0);
    return library;
}

static void *packed_function(void *library, const char *name)
{
    void *function = dlsym(library, name);
    cr_assert_not_null(function, "%s", name);
    return function;
}

/* glibc's own backtrace_symbols_fd and backtrace_symbols. */
static void *glibc_function(const char *name)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(libc);
    void *function = dlsym(libc, name);
    cr_assert_not_null(function, "%s", name);
    return function;
}

typedef void symbols_fd_function(void *const *, int, int);

struct frame_list {
    void *frames[PACKED_COUNT];
    symbols_fd_function *write;
};

static void write_frame_list(int fd, void *context)
{
    struct frame_list *list = context;
    list->write(list->frames, PACKED_COUNT, fd);
}

/* Where no padding separates two functions, address - 1 is the end of the
 * one before: each is named by itself, as glibc's dladdr names it. */
Test(naming, symbols_fd_names_function_pointers_as_glibc_does)
{
    void *library = open_packed_library();
    struct frame_list ours = { .write = backtrace_symbols_fd };
    for (int i = 0; i < PACKED_COUNT; i++)
        ours.frames[i] = packed_function(library, packed_names[i]);
    struct frame_list theirs = ours;
    theirs.write = (symbols_fd_function *)glibc_function("backtrace_symbols_fd");

    char *our_text = capture_output(write_frame_list, &ours);
    char *their_text = capture_output(write_frame_list, &theirs);
    cr_assert_str_eq(our_text, their_text);
    for (int i = 0; i < PACKED_COUNT; i++) {
        char expected[64];
        snprintf(expected, sizeof expected, "(%s+0x0)", packed_names[i]);
        cr_assert(strstr(our_text, expected), "no %s in:\n%s", expected, our_text);
    }
    free(our_text);
    free(their_text);
}

Test(naming, symbols_names_function_pointers_as_glibc_does)
{
    void *library = open_packed_library();
    void *frames[PACKED_COUNT + 1];
    for (int i = 0; i < PACKED_COUNT; i++)
        frames[i] = packed_function(library, packed_names[i]);
    frames[PACKED_COUNT] = (void *)glibc_function; /* a static function of this file */
    char **(*glibc_symbols)(void *const *, int) =
        (char **(*)(void *const *, int))glibc_function("backtrace_symbols");

    char **ours = backtrace_symbols(frames, PACKED_COUNT + 1);
    char **theirs = glibc_symbols(frames, PACKED_COUNT);
    cr_assert_not_null(ours);
    cr_assert_not_null(theirs);
    for (int i = 0; i < PACKED_COUNT; i++)
        cr_assert_str_eq(ours[i], theirs[i], "frame %d", i);
    /* glibc cannot name a static function; we name it by its first byte. */
    cr_assert(strstr(ours[PACKED_COUNT], "(glibc_function+0)"), "%s", ours[PACKED_COUNT]);
    free(ours);
    free(theirs);
}

/* ---- addresses that are no function's ---- */

#define ODD_ADDRESSES 11

struct address_list {
    void *addresses[ODD_ADDRESSES];
    int count;
    symbols_fd_function *write;
};

static void write_address_list(int fd, void *context)
{
    struct address_list *list = context;
    list->write(list->addresses, list->count, fd);
}

static void assert_named_as_glibc_names(struct address_list *list)
{
    struct address_list theirs = *list;
    list->write = backtrace_symbols_fd;
    theirs.write = (symbols_fd_function *)glibc_function("backtrace_symbols_fd");
    char *our_text = capture_output(write_address_list, list);
    char *their_text = capture_output(write_address_list, &theirs);
    cr_assert_str_eq(our_text, their_text);
    free(our_text);
    free(their_text);
}

/* A link warning's symbol (value 0, in a section never mapped) does not
 * name the module's ELF header; of two aliases of different sizes, the
 * long one names an address past the short one's end. */
Test(naming, unmapped_sections_and_aliases_of_two_sizes_as_glibc_does)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/odd_symbols.so", getenv("EXECINFO_EX_TESTS"));
    void *library = dlopen(path, RTLD_NOW);
    cr_assert_not_null(library, "%s", dlerror());
    cr_assert_eq(backtrace_refresh_index(), 0);
    Dl_info info;
    cr_assert_neq(dladdr(dlsym(library, "odd_table"), &info), 0);

    struct address_list list = { .count = 0 };
    list.addresses[list.count++] = (char *)info.dli_fbase + 0x10;
    const char *objects[] = { "odd_table", "odd_small" };
    const int offsets[] = { 0, 8, 100, 200, 255 };
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 5; i++)
            list.addresses[list.count++] = (char *)dlsym(library, objects[o]) + offsets[i];
    assert_named_as_glibc_names(&list);

    /* Either order of the two sizes is seen: odd_small, the short one,
     * comes first in .dynsym (it would name nothing past 16 bytes). */
    char **names = backtrace_symbols(list.addresses, list.count);
    cr_assert_not_null(names);
    cr_assert(strstr(names[6], "(odd_small+0) "), "%s", names[6]);
    cr_assert(strstr(names[8], "(odd_small_long+0x64)"), "%s", names[8]);
    free(names);
}

/* Memory that is no module: JIT code in a memfd, a mapped data file. */
Test(naming, mapped_files_that_are_no_module_are_bare_addresses)
{
    int code = memfd_create("jit", 0);
    cr_assert_geq(code, 0);
    cr_assert_eq(ftruncate(code, 4096), 0);
    char *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, code, 0);
    cr_assert_neq(jit, MAP_FAILED);
    char file[] = "/tmp/execinfo_ex_naming_XXXXXX";
    int data = mkstemp(file);
    cr_assert_geq(data, 0);
    cr_assert_eq(ftruncate(data, 4096), 0);
    char *mapped = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, data, 0);
    cr_assert_neq(mapped, MAP_FAILED);
    unlink(file);

    struct address_list list = { .addresses = { jit + 0x10, mapped + 0x10 }, .count = 2 };
    assert_named_as_glibc_names(&list);
    char **names = backtrace_symbols(list.addresses, list.count);
    cr_assert_not_null(names);
    cr_assert_eq(names[0][0], '[', "%s", names[0]);
    cr_assert_eq(names[1][0], '[', "%s", names[1]);
    free(names);
}

/* ---- a fault on a function's first instruction, in the program's own handler ---- */

static symbols_fd_function *handler_glibc_symbols_fd;

static void write_both_traces(int signo, siginfo_t *info, void *ucontext)
{
    (void)signo;
    (void)info;
    void *frames[32];
    int count = backtrace_ucontext(frames, 32, ucontext);
    backtrace_symbols_fd(frames, count, 2);
    write(2, "--\n", 3);
    handler_glibc_symbols_fd(frames, count, 2);
    _exit(0);
}

static void catch_segv(void (*handler)(int, siginfo_t *, void *))
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO;
    cr_assert_eq(sigaction(SIGSEGV, &action, NULL), 0);
}

static void fault_on_first_instruction(void *context)
{
    void (*write_first)(int *) = (void (*)(int *))packed_function(context, "packed_write_first");
    write_first(NULL);
}

static void first_line(const char *text, char *line, size_t capacity)
{
    size_t length = strcspn(text, "\n");
    cr_assert_lt(length, capacity);
    memcpy(line, text, length);
    line[length] = '\0';
}

Test(naming, handler_pattern_names_a_fault_on_a_first_instruction_as_glibc_does)
{
    static struct child_result result;
    void *library = open_packed_library();
    handler_glibc_symbols_fd = (symbols_fd_function *)glibc_function("backtrace_symbols_fd");
    catch_segv(write_both_traces);
    run_child(fault_on_first_instruction, library, &result);
    assert_exited_with(&result, 0);

    const char *separator = strstr(result.output, "--\n");
    cr_assert_not_null(separator, "%s", result.output);
    char ours[512], theirs[512];
    first_line(result.output, ours, sizeof ours);
    first_line(separator + 3, theirs, sizeof theirs);
    cr_assert_str_eq(ours, theirs);
    cr_assert(strstr(ours, "(packed_write_first+0x0)"), "%s", ours);
}

/* print_trace inside that handler: the frame after the signal frame is the
 * interrupted instruction, named by itself. */
static void print_trace_in_handler(int signo, siginfo_t *info, void *ucontext)
{
    (void)signo;
    (void)info;
    (void)ucontext;
    print_trace_fd(2);
    _exit(0);
}

Test(naming, print_trace_names_the_interrupted_first_instruction)
{
    static struct child_result result;
    void *library = open_packed_library();
    catch_segv(print_trace_in_handler);
    run_child(fault_on_first_instruction, library, &result);
    assert_exited_with(&result, 0);
    cr_assert(strstr(result.output, "(packed_write_first+0) ["), "%s", result.output);
    cr_assert(!strstr(result.output, "(packed_invert+"), "%s", result.output);
}

/* ---- the crash report ---- */

static void crash_under_the_handler(void *context)
{
    install_or_exit(NULL);
    fault_on_first_instruction(context);
}

Test(naming, crash_report_names_a_fault_on_a_first_instruction)
{
    static struct child_result result;
    void *library = open_packed_library();
    run_child(crash_under_the_handler, library, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "#0  "), "%s", result.output);
    cr_assert(strstr(strstr(result.output, "#0  "), "(packed_write_first+0) ["), "%s",
              result.output);
    cr_assert(!strstr(result.output, "(packed_invert+"), "%s", result.output);
}

static void crash_under_the_json_handler(void *context)
{
    install_or_exit("format=json");
    fault_on_first_instruction(context);
}

Test(naming, json_crash_report_names_a_fault_on_a_first_instruction)
{
    static struct child_result result;
    void *library = open_packed_library();
    run_child(crash_under_the_json_handler, library, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "\"function\":\"packed_write_first\",\"mangled\":"
                                    "\"packed_write_first\",\"offset\":\"0x0\""),
              "%s", result.output);
}

/* A SIGSEGV the program handles itself, whose handler raises SIGBUS: the
 * report of the SIGBUS walks through the first signal frame, and the pc
 * after it is the instruction the SIGSEGV interrupted. */
static void raise_bus(int signo, siginfo_t *info, void *ucontext)
{
    (void)signo;
    (void)info;
    (void)ucontext;
    raise(SIGBUS);
}

static void nested_crash(void *context)
{
    catch_segv(raise_bus);
    install_or_exit("signals=BUS");
    fault_on_first_instruction(context);
}

Test(naming, crash_report_names_the_frame_after_a_nested_signal_frame)
{
    static struct child_result result;
    void *library = open_packed_library();
    run_child(nested_crash, library, &result);
    assert_died_by(&result, SIGBUS);
    const char *restorer = strstr(result.output, "__restore_rt");
    cr_assert_not_null(restorer, "%s", result.output);
    const char *next = strchr(restorer, '\n');
    cr_assert_not_null(next);
    cr_assert_eq(strncmp(next + 1, "#", 1), 0, "%s", result.output);
    cr_assert(strstr(next, "(packed_write_first+0) ["), "%s", result.output);
    cr_assert(!strstr(result.output, "(packed_invert+"), "%s", result.output);
}

/* ---- a call through a bad function pointer ---- */

static void (*volatile bad_target)(void);

__attribute__((noinline)) static void call_through_pointer(void)
{
    bad_target();
    __asm__ volatile("" ::: "memory"); /* no tail call: the call pushes a return address */
}

__attribute__((noinline)) static void caller_of_the_bad_call(void)
{
    call_through_pointer();
    __asm__ volatile("" ::: "memory");
}

static void write_ucontext_and_backtrace(int signo, siginfo_t *info, void *ucontext)
{
    (void)signo;
    (void)info;
    void *frames[32];
    int count = backtrace_ucontext(frames, 32, ucontext);
    backtrace_symbols_fd(frames, count, 2);
    write(2, "--\n", 3);
    count = backtrace(frames, 32);
    backtrace_symbols_fd(frames, count, 2);
    _exit(0);
}

static void jump_to(void *target)
{
    bad_target = (void (*)(void))target;
    caller_of_the_bad_call();
}

/* After the bad pc: the caller from the return address the call left at
 * the stack pointer, then its caller. */
static void assert_walked_on(const char *trace, const char *bad_line)
{
    const char *bad = strstr(trace, bad_line);
    cr_assert_not_null(bad, "no %s in:\n%s", bad_line, trace);
    const char *next = bad + strlen(bad_line);
    cr_assert(strncmp(next, "\n", 1) == 0, "%s", trace);
    const char *caller = strstr(next, "(call_through_pointer+");
    const char *end_of_next_line = strchr(next + 1, '\n');
    cr_assert(caller != NULL && end_of_next_line != NULL && caller < end_of_next_line,
              "the frame after %s is not call_through_pointer:\n%s", bad_line, trace);
    cr_assert(strstr(caller, "(caller_of_the_bad_call+"), "%s", trace);
}

static void jump_to_null_in_child(void *context)
{
    (void)context;
    catch_segv(write_ucontext_and_backtrace);
    jump_to(NULL);
}

static void jump_to_one_in_child(void *context)
{
    (void)context;
    catch_segv(write_ucontext_and_backtrace);
    jump_to((void *)1);
}

/* backtrace_ucontext: frame 0 is the bad pc itself (BAD_LINE), then its
 * callers; backtrace() in the handler: through the signal frame, then the
 * same. */
static void assert_both_walks_go_on(void (*jump)(void *), const char *bad_line)
{
    static struct child_result result;
    run_child(jump, NULL, &result);
    assert_exited_with(&result, 0);
    char *separator = strstr(result.output, "--\n");
    cr_assert_not_null(separator, "%s", result.output);
    *separator = '\0';
    cr_assert_eq(strncmp(result.output, bad_line, strlen(bad_line)), 0, "%s", result.output);
    assert_walked_on(result.output, bad_line);
    assert_walked_on(separator + 3, bad_line);
}

Test(naming, call_through_null_is_walked_to_its_callers)
{
    assert_both_walks_go_on(jump_to_null_in_child, "[0x0]");
}

Test(naming, jump_to_one_is_walked_to_its_callers)
{
    assert_both_walks_go_on(jump_to_one_in_child, "[0x1]");
}

static void crash_by_null_call(void *context)
{
    (void)context;
    install_or_exit(NULL);
    jump_to(NULL);
}

Test(naming, crash_report_of_a_call_through_null_names_the_callers)
{
    static struct child_result result;
    run_child(crash_by_null_call, NULL, &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "#0  [(nil)]\n#1  "), "%s", result.output);
    const char *caller = strstr(result.output, "#1  ");
    const char *named = strstr(caller, "(call_through_pointer+");
    cr_assert(named != NULL && named < strchr(caller, '\n'), "%s", result.output);
    cr_assert(strstr(caller, "(caller_of_the_bad_call+"), "%s", result.output);
}

/* ---- aliases ---- */

static void run_fixture(const char *name, const char *argument, struct child_result *result)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", getenv("EXECINFO_EX_TESTS"), name);
    char *argv[] = { path, (char *)argument, NULL };
    run_program(path, argv, NULL, NULL, result);
}

Test(naming, global_name_wins_over_a_compiler_made_local_alias)
{
    static struct child_result result;
    char command[4200];
    /* The fixture really has the alias, or the test proves nothing. */
    snprintf(command, sizeof command, "nm %s/alias_program", getenv("EXECINFO_EX_TESTS"));
    FILE *symbols = popen(command, "r");
    cr_assert_not_null(symbols);
    char listing[1 << 16];
    size_t length = fread(listing, 1, sizeof listing - 1, symbols);
    listing[length] = '\0';
    pclose(symbols);
    cr_assert(strstr(listing, " t recursive_count.localalias\n"), "%s", listing);

    run_fixture("alias_program", NULL, &result);
    assert_exited_with(&result, 0);
    cr_assert(strstr(result.output, "(recursive_count+"), "%s", result.output);
    cr_assert(!strstr(result.output, "localalias"), "%s", result.output);
}

/* ---- a fully static program ---- */

static int frames_counted(const char *output)
{
    int count = -1;
    cr_assert_eq(sscanf(output, "frames %d", &count), 1, "%s", output);
    return count;
}

Test(naming, static_program_is_walked_as_glibc_walks_it)
{
    static struct child_result ours, theirs;
    run_fixture("static_program", "trace", &ours);
    run_fixture("static_program_glibc", "trace", &theirs);
    assert_exited_with(&ours, 0);
    assert_exited_with(&theirs, 0);
    int count = frames_counted(ours.output);
    cr_assert_eq(count, frames_counted(theirs.output), "ours:\n%s\nglibc's:\n%s", ours.output,
                 theirs.output);
    const char *inner = strstr(ours.output, "(trace_inner+0x");
    const char *outer = inner ? strstr(inner, "(trace_outer+0x") : NULL;
    cr_assert(outer != NULL && strstr(outer, "(main+0x"), "%s", ours.output);
    /* print_trace: the same frames, with their lines. */
    cr_assert(strstr(ours.output, "Obtained "), "%s", ours.output);
    cr_assert(strstr(ours.output, "static_program.c:"), "%s", ours.output);
}

Test(naming, static_program_crash_is_reported_with_its_frames)
{
    static struct child_result result;
    run_fixture("static_program", "crash", &result);
    assert_died_by(&result, SIGSEGV);
    cr_assert(strstr(result.output, "#0  "), "%s", result.output);
    const char *first = strstr(result.output, "#0  ");
    cr_assert(strstr(first, "(crash_in_static_program+0)"), "%s", result.output);
    cr_assert(strstr(first, "#1  "), "%s", result.output);
    cr_assert(strstr(strstr(first, "#1  "), "(main+0x"), "%s", result.output);
}
