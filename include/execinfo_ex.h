/* execinfo_ex.h: glibc-compatible backtraces that are safe in a signal
 * handler, name static functions, and know file:line.
 *
 * This is the library's only public header. It can replace <execinfo.h>:
 * the first three declarations are glibc's, with glibc's semantics and
 * output. Every function states:
 *   AS-Safe   whether it may be called from a signal handler that
 *             interrupted anything (malloc, dlopen, another backtrace);
 *   MT-Safe   whether threads may call it at once;
 *   Needs     what must have happened first.
 *
 * Symbol data comes from an index built in the normal world (when the
 * library is loaded, after each dlopen, dlmopen and dlclose through the
 * shared library, which interposes them, and by backtrace_symbols,
 * backtrace_resolve and backtrace_refresh_index once modules were loaded
 * or unloaded) and read lock-free by the AS-Safe calls. A module loaded
 * since (with the static library, or by a dlopen whose result depends on
 * its caller) is written by the AS-Safe calls as path(+0xoffset), its path
 * from /proc/self/maps. Where the library is only preloaded (no module
 * links it: index_at_load=auto) a module without a warm file in the index
 * cache is not read at load either: the AS-Safe calls write its frames
 * as path(+0xoffset) until a backtrace_symbols, backtrace_resolve or
 * backtrace_refresh_index builds it; the crash handler names them from
 * the module's symbol table and its second stage (a symbolizer process).
 * Needs: nothing; every call works from the first one. */
#ifndef EXECINFO_EX_H
#define EXECINFO_EX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- glibc-compatible ------------------------------------------------ */

/* Store up to SIZE return addresses of the calling thread, the caller of
 * backtrace first, and return how many were stored (0 when SIZE <= 0).
 * AS-Safe, also on the first call in the process (no malloc, no dlopen;
 * glibc's first call dlopens libgcc_s). MT-Safe. A thread's first call
 * maps one page for the frame rules its later calls reuse (as
 * backtrace_ucontext and backtrace_skip do); the trace is always the one
 * a full walk gives. */
int backtrace(void **buffer, int size);

/* Translate SIZE addresses into strings "path(function+0xoffset) [0xaddr]"
 * (glibc's shapes "path(+0xoffset) [0xaddr]", "path() [0xaddr]" and
 * "[0xaddr]" where glibc prints them). Function names come from the full
 * symbol table, so static functions are named without -rdynamic. The
 * result is one malloc'd block: free() the array only. Returns NULL with
 * errno ENOMEM when the block cannot be allocated, and NULL for SIZE <= 0
 * or a NULL BUFFER. Not AS-Safe (it mallocs). MT-Safe. Refreshes the index
 * if modules were loaded or unloaded; if memory runs out meanwhile, a
 * module that could not be read is written path(+0xoffset), and the next
 * call reads it again. */
char **backtrace_symbols(void *const *buffer, int size);

/* Write the same translation to FD, one line per address, in glibc's fd
 * shape "path(function+0xoffset)[0xaddr]". Never mallocs. A bad fd, a full
 * device or a pipe without reader makes it return quietly: no SIGPIPE, and
 * errno is left as it was. AS-Safe. MT-Safe: output goes out in writes of
 * whole lines (up to 1 KiB at a time; a longer line is split), so the
 * lines of two threads writing to one fd do not mix. */
void backtrace_symbols_fd(void *const *buffer, int size, int fd);

/* ---- extensions -------------------------------------------------------- */

/* backtrace without the SKIP innermost frames (SKIP 0: the same as
 * backtrace), for a wrapper that should not show itself. It is also the
 * name to call from a library: "backtrace" may bind to glibc's, which
 * comes earlier in the lookup order. AS-Safe. MT-Safe. */
int backtrace_skip(void **buffer, int size, int skip);

/* Memory a thread keeps between captures (backtrace_skip_range): the
 * rules of the frames its captures stepped out of, so that a frame met
 * again is stepped with the rule the memo remembers instead of one looked
 * up again, with the same result. Zero it before the first
 * use; one capture at a time may use it (a thread's own memo, e.g.
 * "static __thread struct backtrace_memo memo;", and not the same one in
 * a signal handler that may interrupt a capture). */
struct backtrace_memo {
    unsigned long long opaque[512];
};

/* Make the COUNT consecutive struct backtrace_memo at MEMO one larger
 * memo (COUNT a power of two, at most 64): it keeps 256 rules per
 * struct instead of 255 in all, for a program whose captures step
 * through more return addresses (an interpreter's deep stacks). A zeroed
 * single struct needs no call. Returns 0, or -1 with errno EINVAL for a
 * NULL MEMO or another COUNT. AS-Safe. MT-Safe (for distinct memos). */
int backtrace_memo_init(struct backtrace_memo *memo, unsigned count);

/* backtrace from the first frame whose address is outside [START, END):
 * the innermost frames inside it (typically the caller's own library's
 * text, for an allocator or a logger that wraps the capture) are skipped,
 * however many inlining left, and SIZE frames are stored after them.
 * START == END skips nothing. MEMO may be NULL; a memo makes repeated
 * captures from similar stacks cheaper. AS-Safe. MT-Safe
 * (with a memo: MT-Safe for distinct memos). */
int backtrace_skip_range(void **buffer, int size, const void *start, const void *end,
                         struct backtrace_memo *memo);

/* What a function saw on entry, before it changed any of it: the frame of
 * its caller, from which backtrace_from_caller walks without stepping
 * through the function's own frames. x86_64: RETURN_ADDRESS is the word
 * at rsp on entry, STACK_POINTER is rsp + 8 (the caller's rsp after the
 * return), RBP and RBX the two registers a frame's rules may address it
 * by (glibc's lazy-binding trampoline keeps its frame in rbx).
 * aarch64: RETURN_ADDRESS is x30 on entry, STACK_POINTER is sp, and the
 * fields named RBP and RBX hold x29 and x19. An
 * allocator fills it with a few instructions of assembly at its entry
 * points (the hooks library does: src/base/caller_entry.h). */
struct backtrace_caller {
    const void *return_address;
    const void *stack_pointer;
    const void *rbp;
    const void *rbx;
};

/* backtrace of the caller that CALLER describes: its return address
 * first, then its callers, up to SIZE; the same frames a walk from inside
 * the function gives once the function's own frames are skipped
 * (backtrace_skip_range over its text), without the cost of stepping
 * them. MEMO as for backtrace_skip_range. Returns the count; 0 for SIZE
 * <= 0 or a NULL BUFFER or CALLER. AS-Safe. MT-Safe (with a memo:
 * MT-Safe for distinct memos). */
int backtrace_from_caller(void **buffer, int size, const struct backtrace_caller *caller,
                          struct backtrace_memo *memo);

/* For an SA_SIGINFO handler: store up to SIZE addresses of the context
 * UCONTEXT (the handler's third argument). The first is the interrupted
 * instruction itself, the next ones return addresses; the handler's own
 * frames and the signal trampoline do not appear. Returns the count, 0 for
 * SIZE <= 0 or a NULL UCONTEXT. AS-Safe. MT-Safe. */
int backtrace_ucontext(void **buffer, int size, const void *ucontext);

/* Write the calling thread's trace to stderr, starting at the caller of
 * print_trace: "Obtained N stack frames." then one line per frame in the
 * backtrace_symbols shape, with " at file:line" appended where the line
 * index has the frame (by default: the main executable; see
 * EXECINFO_EX_OPTIONS in the README). At most 64 frames. AS-Safe. MT-Safe. */
void print_trace(void);

/* print_trace to FD. AS-Safe. MT-Safe. */
void print_trace_fd(int fd);

/* Write SIZE frames to FD as print_trace does (symbols shape, " at
 * file:line" where known), without the "Obtained" header. FLAGS: 0 when
 * every address is a return address (from backtrace), or
 * BACKTRACE_FIRST_IS_PC when buffer[0] is an interrupted instruction (from
 * backtrace_ucontext), so its line is looked up exactly. AS-Safe. MT-Safe. */
void backtrace_print_fd(void *const *buffer, int size, int flags, int fd);

#define BACKTRACE_FIRST_IS_PC 1
/* FLAGS bit for backtrace_print_fd: write one JSON array instead, one frame
 * object a line, {"address","module","function","offset","file","line"}
 * as in the JSON crash report (docs/CRASH_REPORT.md); "[]" for no frames.
 * No newline after the array: it is meant to go inside an object. */
#define BACKTRACE_JSON 2

/* Install the fatal-signal handler: on SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT, SIGTRAP and SIGSYS (by default) it writes one report (signal,
 * code, fault address, sender, pid, thread, program, time, the trace of
 * the faulting context with file:line, the modules of the trace with
 * build-ids, registers on request) and then calls the handler that was
 * installed before, or dies by the same signal with the default action,
 * so that the exit status and the core dump are unchanged.
 * OPTIONS is NULL or "name=value:..." as in EXECINFO_EX_OPTIONS (which
 * applies first): signals=SEGV,BUS,...; report=stderr|/absolute/path
 * (created 0600, never through a symlink, never over an existing file
 * unless overwrite=1); format=text|json; frames=N; registers=0|1;
 * modules=0|1. Returns 0, or -1 with errno EINVAL for a malformed option
 * (explained in one line on stderr). The calling thread gets an alternate
 * signal stack if it has none. With LD_PRELOAD=libexecinfo_ex.so,
 * EXECINFO_EX_OPTIONS=handler=1 installs it at load.
 * Not AS-Safe (builds the index). MT-Safe. */
int backtrace_install_fatal_handler(const char *options);

/* Write a report of every thread of the process to FD, as the crash
 * report lists them (the calling thread first, from its caller, then the
 * others by tid, each stopped while the report is written), and return:
 * the program runs on. FLAGS: 0 for text, BACKTRACE_DUMP_JSON for JSON.
 * The options threads=, threads_timeout_ms=, frames=, modules= and
 * registers= are the installed handler's, else EXECINFO_EX_OPTIONS's.
 * Returns how many threads were written, or -1 with errno EBADF (FD < 0),
 * EINVAL (unknown flags), EBUSY (another dump is being written) or the
 * write's error. AS-Safe once the fatal handler is installed (before, its
 * first call reads the options and builds the index). MT-Safe. */
#define BACKTRACE_DUMP_JSON 1
int backtrace_dump_threads(int fd, unsigned flags);

/* One thread of the process as backtrace_with_threads_stopped found it. */
struct backtrace_stopped_thread {
    int tid;
    /* 1: stopped in a handler of a reserved real-time signal, its
     * registers in UCONTEXT; 0: it runs on, or is blocked where the
     * kernel holds it, and WHY says which ("blocks every signal", "did
     * not answer within N ms", ...). */
    int stopped;
    const char *why;
    const void *ucontext;        /* a ucontext_t when stopped, else NULL */
    /* Its stack pointer: from its registers, or where the kernel shows
     * it blocked in a system call; 0 when unknown. */
    uintptr_t stack_pointer;
    /* Its thread pointer (x86-64: the fs base), said by the thread when
     * it stopped: its static TLS lies just below; 0 when unknown. */
    uintptr_t thread_pointer;
};

/* Called with every other thread of the process (a thread that exited
 * meanwhile is not there) while they are stopped. It runs in the calling
 * thread, in the world of a signal handler: a stopped thread may hold
 * any lock, malloc's included, so it may only use async-signal-safe
 * calls. */
typedef int backtrace_stopped_callback(const struct backtrace_stopped_thread *threads,
                                       int count, void *context);

/* Stop every other thread (a stop-the-world with a handshake, as LSan's
 * and Boehm GC's: the machinery of the every-thread report), call
 * CALLBACK, let them go on, and return what CALLBACK returned. A thread
 * that does not answer within TIMEOUT_MS (1 to 60000) is given up on,
 * and CALLBACK sees it with stopped = 0: the call never hangs. Returns -1
 * with errno EINVAL (a bad TIMEOUT_MS or a NULL CALLBACK), EBUSY (a
 * report, a dump or another stop is under way) or ENOMEM. AS-Safe.
 * MT-Safe. */
int backtrace_with_threads_stopped(int timeout_ms, backtrace_stopped_callback *callback,
                                   void *context);

/* The report's format, as the crash callback sees it. */
#define BACKTRACE_REPORT_TEXT 0
#define BACKTRACE_REPORT_JSON 1

/* A crash reporter's own part of the report. The fatal handler calls it
 * once, in the signal handler, after the trace and before the end of the
 * report, with the report's FD and FORMAT: in text it may write whole
 * lines; in JSON it may write members, each starting with a comma
 * (,"name":value). It runs where the crashed code stopped: it may only use
 * async-signal-safe calls (write, the AS-Safe functions of this header) -
 * no malloc, no stdio, no locks - and should return soon; the handler
 * then chains or dies as usual. A fault inside it ends the process by the
 * original signal. */
typedef void backtrace_crash_callback(int fd, int format, int signo, const void *siginfo,
                                      const void *ucontext, void *context);

/* Set (or, with NULL, clear) the callback and its CONTEXT: the program's
 * own, one at a time. Returns 0. Not AS-Safe. MT-Safe. */
int backtrace_set_crash_callback(backtrace_crash_callback *callback, void *context);

/* For a library: add a callback, called after the program's (added ones
 * in the order of their slots: a removed one's slot is reused), without
 * replacing it or another library's. Adding the same pair
 * again changes nothing. Returns 0, or -1 with errno EINVAL (NULL) or
 * ENOSPC (4 are added already). Remove it before the library is
 * unloaded: returns 0, or -1 with errno ENOENT if the pair was not added.
 * Not AS-Safe. MT-Safe. */
int backtrace_add_crash_callback(backtrace_crash_callback *callback, void *context);
int backtrace_remove_crash_callback(backtrace_crash_callback *callback, void *context);

/* The crash lead: one function (with its CONTEXT) that the report of a
 * fatal signal starts with, for a library that knows better than the
 * trace what went wrong (the heap hooks, after a heap error they found
 * and aborted for, or a fault in a guard page). Called in the signal
 * handler, under the same rules as a crash callback, first: in text
 * before the report's first line (whole lines); in JSON right after the
 * report's header members (,"name":value members). It returns
 * BACKTRACE_LEAD_KEEP_TRACE, or BACKTRACE_LEAD_LEAVE_OUT_TRACE when the
 * signal's own trace is the library's and not the program's (an abort
 * the library raised), or the lead wrote it already (the access stack
 * of a guard page's fault): the report then says "*** backtrace: left out (the
 * heap error above says where)", or "backtrace_left_out":true in JSON,
 * instead of the trace and its modules. One lead at a time: set it to
 * NULL before the library is unloaded. Returns 0. Not AS-Safe. MT-Safe. */
#define BACKTRACE_LEAD_KEEP_TRACE 0
#define BACKTRACE_LEAD_LEAVE_OUT_TRACE 1
typedef int backtrace_crash_lead(int fd, int format, int signo, const void *siginfo,
                                 const void *ucontext, void *context);
int backtrace_set_crash_lead(backtrace_crash_lead *lead, void *context);

/* Give back every signal whose action is still ours to the action it had
 * before. Not AS-Safe. MT-Safe. */
void backtrace_uninstall_fatal_handler(void);

/* Rebuild the symbol index now if modules were loaded or unloaded since it
 * was built. The shared library does this itself after each dlopen,
 * dlmopen and dlclose that succeeded; call it after dlopen with the static
 * library, or after a dlopen by a bare name found along the calling
 * module's own RUNPATH or with $ORIGIN (which the shared library passes
 * straight to glibc), before a signal-safe call that should name the new
 * module. Returns 0, or a negative errno-style code:
 * -ENOMEM when memory ran out (here, in libelf or in libdw); then the
 * modules that could be read are named, the others are written
 * path(+0xoffset) until the next refresh, backtrace_symbols or
 * backtrace_resolve reads them again (or, if even the new index could not
 * be made, the old one stays). Not AS-Safe. MT-Safe. */
int backtrace_refresh_index(void);

/* One frame of a resolved trace. An address whose code was inlined gives
 * several frames: first the innermost inlined function, with inlined = 1,
 * then its callers; the last frame of a group is the real (physical)
 * frame, with inlined = 0. Strings are NULL when unknown. */
struct backtrace_frame {
    void *address;          /* the address given */
    const char *module;     /* path of the module holding it */
    void *module_base;      /* load bias of that module */
    const char *function;   /* function name (inlined callee for inlined) */
    unsigned long offset;   /* address - function start; or - module_base
                               when function is NULL */
    const char *file;       /* source file */
    unsigned int line;      /* source line, 0 when unknown */
    unsigned int column;    /* source column, 0 when unknown */
    int inlined;            /* 1 when this frame was inlined into the next */
    int index;              /* position of address in the input buffer */
};

/* Resolve SIZE addresses into *FRAMES: module, function, offset, file,
 * line, column and inlined callers, from the full symbol table and DWARF
 * (libdw, all modules, separate debug files followed). FLAGS as for
 * backtrace_print_fd, plus BACKTRACE_INDEX_ONLY (below). Returns the
 * number of frames (>= SIZE when every address resolves to at least one),
 * with *FRAMES one malloc'd block to free() once; or -1 with errno ENOMEM
 * (or EINVAL for a NULL argument or SIZE < 0), *FRAMES then NULL.
 * Not AS-Safe (it mallocs and reads files). MT-Safe. */
int backtrace_resolve(void *const *buffer, int size, int flags,
                      struct backtrace_frame **frames);

/* FLAGS bit for backtrace_resolve: name the frames from the symbol index
 * alone, as the crash report and print_trace do, without libdwfl: no file
 * is read (but by the index's refresh after a dlopen) and nothing is
 * allocated but the result. File, line and inlined callers then come only
 * from the modules that have a line index (lines= of EXECINFO_EX_OPTIONS;
 * by default the program and the modules with a line table of their own),
 * and column is always 0. */
#define BACKTRACE_INDEX_ONLY 4

/* ---- heap hook layer: libexecinfo_ex_hooks.so --------------------------- */

/* Defined by libexecinfo_ex_hooks.so (link -lexecinfo_ex_hooks, or
 * LD_PRELOAD it), which replaces malloc and its family for the process.
 * Bionic's hook pointers, with bionic's rules: all NULL unless the
 * environment has LIBC_HOOKS_ENABLE=1 (or LIBC_HOOK_ENABLE=1); then each
 * starts at the default implementation, which a hook that replaces it is
 * expected to call. calloc goes through __malloc_hook and then zeroes;
 * posix_memalign and aligned_alloc through __memalign_hook for a
 * power-of-two alignment only (otherwise they fail with EINVAL); valloc
 * and pvalloc through __memalign_hook with the page size; there is no hook
 * for malloc_usable_size. CALLER is the return address of the malloc call.
 * They may be set at any time; no thread safety is promised for that. */
extern void *(*volatile __malloc_hook)(size_t size, const void *caller);
extern void *(*volatile __realloc_hook)(void *pointer, size_t size, const void *caller);
extern void (*volatile __free_hook)(void *pointer, const void *caller);
extern void *(*volatile __memalign_hook)(size_t alignment, size_t size, const void *caller);

/* Describe the heap block that owns ADDRESS, or the nearest one within 4
 * KiB of it, to FD: where ADDRESS is relative to it, its size, whether it
 * is live or freed, and the stacks that allocated (and freed) it. Returns
 * 1 if a block was described, 0 if none is there, -1 without recording
 * (heap=0, or the hooks library not loaded: then this symbol is absent).
 * AS-Safe (a scan of every block: milliseconds for a large heap). MT-Safe.
 * Defined by libexecinfo_ex_hooks.so. */
int backtrace_heap_describe(const void *address, int fd);

/* Check the guards of every block (and the fill of every freed one) now,
 * writing one entry per damaged block to FD with its allocating stack.
 * Returns how many are damaged, or -1 without recording. Never aborts.
 * AS-Safe. MT-Safe. Defined by libexecinfo_ex_hooks.so. */
int backtrace_heap_check(int fd);

/* Write a heap profile of the process now to PATH (%p in it: the process
 * id; relative to the current directory): for every allocation stack, the
 * objects and bytes allocated there in all, those still in use, and those
 * in use when the live bytes peaked (within 1% of the peak). The format
 * is the profile_format option's: pprof's profile.proto, gzipped
 * (default; go tool pprof reads it without the binary: functions, files,
 * lines and inlined calls are in it), or folded stacks of the
 * profile_sample option's value. Written under a temporary name and
 * renamed over PATH when complete. Returns 0, or -1 with errno: EINVAL
 * (PATH NULL or empty), ENOSYS (heap=0), ENOMEM, ENAMETOOLONG, or what
 * open, write and rename set. Not AS-Safe (it mallocs, reads debug info
 * and compresses). MT-Safe. Defined by libexecinfo_ex_hooks.so. */
int backtrace_heap_profile(const char *path);

/* Check the heap for leaks now, as LeakSanitizer does: with every other
 * thread stopped, the live blocks that no root reaches (the writable
 * segments of every module, every thread's stack from its stack pointer,
 * its registers and its static TLS, and what the loader allocated),
 * directly or through other blocks, are leaked: directly when no other
 * leaked block points at them, indirectly when one does. The report,
 * grouped by allocation stack (docs/HEAP_REPORT.md), goes to FD. FLAGS:
 * 0 for text, BACKTRACE_HEAP_LEAK_JSON for JSON. Returns the number of
 * leaked blocks (0: none), or -1 with errno EBADF (FD < 0), EINVAL
 * (unknown flags), ENOSYS (heap=0), EBUSY (another check, a crash report
 * or a dump is under way) or ENOMEM. A thread that cannot be stopped
 * within threads_timeout_ms is scanned as it runs, and the report says
 * so. Not AS-Safe (it takes the loader's lock). MT-Safe. Defined by
 * libexecinfo_ex_hooks.so. */
#define BACKTRACE_HEAP_LEAK_JSON 1
int backtrace_heap_leak_check(int fd, unsigned flags);

/* Never report the live block that POINTER points into (its start or
 * inside it) as leaked, nor the blocks only it reaches, as LSan's
 * __lsan_ignore_object. Freeing the block ends it. Returns 0, or -1 with
 * errno EINVAL (not inside a live block of the hooks library) or ENOSYS
 * (heap=0). AS-Safe. MT-Safe. Defined by libexecinfo_ex_hooks.so. */
int backtrace_heap_ignore(const void *pointer);

/* The heap hook layer's bookkeeping (live blocks with their sizes and
 * allocation stacks, counters, options; not the heap's contents, not the
 * hook pointers) as an opaque, versioned, checksummed blob allocated with
 * malloc: the caller frees it. NULL on failure (errno ENOMEM, or ENOSYS
 * with heap=0). The names of the functions glibc removed in 2.25; see
 * docs/STATE_BLOB.md for the format. MT-Safe. AS-Unsafe. */
void *malloc_get_state(void);

/* The blob's size in bytes (to save it to a file), or 0 for something
 * that is not a blob. MT-Safe. AS-Unsafe. */
size_t malloc_state_size(const void *state);

/* Restore that bookkeeping: 0; -1 for a malformed blob (magic, sizes,
 * checksum: any changed byte, a truncated copy in a smaller malloc block);
 * -2 for a blob of a newer major version. Afterwards a free of a pointer
 * the layer does not know is passed to glibc, not reported. MT-Safe.
 * AS-Unsafe. */
int malloc_set_state(void *state);

/* malloc_set_state for a blob of which LENGTH bytes may be read (a saved
 * file read or mapped back): nothing past them is read, whatever the
 * blob's own total size says; -1 if the blob does not fit in them. Use it
 * for any blob that is not a malloc_get_state() block of this process:
 * malloc_set_state() can only bound its reads by the mappings around the
 * pointer. Returns as malloc_set_state. MT-Safe. AS-Unsafe. */
int malloc_set_state_sized(const void *state, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* EXECINFO_EX_H */
