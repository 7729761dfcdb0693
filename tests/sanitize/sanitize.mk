# tests/sanitize/sanitize.mk: the unit tests under ASan + UBSan, and the
# normal-world ones under Valgrind (issue 6). Included by the Makefile.
#
#   make test-asan       the core library, its tools and the unit tests
#                        built with gcc -fsanitize=address,undefined into
#                        $(BUILD)/asan (a recursive make with BUILD and CC
#                        set), then run there; reports in $(BUILD)/asan/logs
#   make test-valgrind   the normal build's normal-world unit tests, and the
#                        leak tool, under memcheck; logs in $(BUILD)/valgrind/logs
#
# Both fail on any report from any process of the run (Criterion's
# workers, the tests' forked children, the programs they run), not only on
# a failed test: tests/sanitize/check_logs.sh reads the logs. (Criterion
# counts a test as passed once it has reported, whatever its worker's exit
# status: LeakSanitizer's and Valgrind's reports at a worker's exit are
# seen only in the logs.) Checked by planting bugs: a heap read past the
# end in backtrace_symbols, a stack write past an array and a signed
# overflow in the crash report (in crashing children only), a lost buffer
# in the leak tool; each run failed, naming them. What is left out, and
# why, is listed below with each name.

SANITIZE_NICE  ?= nice
SANITIZE_JOBS  ?= 2

# ---- ASan + UBSan --------------------------------------------------------------
ASAN_DIR       := $(BUILD)/asan
ASAN_LOGS      := $(CURDIR)/$(ASAN_DIR)/logs
ASAN_FLAGS     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
SANITIZE_CC    ?= gcc
ASAN_CC        := $(SANITIZE_CC) $(ASAN_FLAGS)

# Not run under ASan, whole binaries:
#   test_hooks, test_mtrace, test_state: their programs (heap_misuse,
#     mtrace_program, state_program) link libexecinfo_ex_hooks.so, which
#     replaces malloc: with ASan's allocator in the same process the two
#     heaps mix (and heap_misuse misuses the heap on purpose).
#   test_profile: preloads libexecinfo_ex_hooks.so into profile_program
#     (built with ASan in this pass), the same two heaps; the profiles'
#     own code runs under ASan in hooks_profile.
#   test_leak_check: the same for its programs (leak_program...), which
#     leak on purpose under the hooks library, under LSan and under
#     valgrind (its fixtures are not built in this pass).
#   test_guard_pages, test_heap_report: their programs (guard_access,
#     guard_vector, vector_after_free) run under the hooks library and
#     misuse the heap on purpose: ASan's allocator would own the blocks and
#     report first (exit 86) where the guard page or the heap report is
#     what the test checks.
#   test_signal_safety: replaces the whole malloc family with traps that
#     call glibc's __libc_* functions, beside ASan's allocator.
#   test_small_stack: measures that every signal-safe call fits in an 8 KiB
#     alternate stack; ASan's redzones make each frame several times
#     larger, so the instrumented build overflows it (by design of the
#     measurement, not a fault of the code: it passes with 16 KiB).
ASAN_SKIP      := test_hooks test_mtrace test_state test_profile test_signal_safety test_small_stack \
	test_leak_check test_guard_pages test_heap_report
# Not run under ASan, single tests (Criterion filters, suite/test):
#   fatal/integer_divide_by_zero: divides by zero on purpose for SIGFPE;
#     UBSan stops it first (division by zero).
#   backtrace_resolve/covers_every_address_and_libc: takes printf's address
#     as "a function in libc.so.6"; under ASan printf is libasan's
#     interceptor.
#   hostile_context/garbage_stack_ends_the_walk: the walk reads words the
#     garbage stack points to after checking /proc/self/maps says they are
#     mapped; ASan's shadow is mapped too, and an instrumented read of the
#     shadow itself faults in the shadow gap. (It runs under Valgrind.)
#   leaks/reads_the_hooks_library_trace_with_stacks: preloads the (ASan)
#     hooks library into a program compiled without ASan.
#   edges/a_use_after_free_through_the_fill_says_the_heap_cannot_tell and
#     edges/a_fifo_as_heap_report_file_does_not_hang_free: run fixtures
#     that misuse the heap on purpose under the hooks library; built with
#     ASan, ASan's malloc takes the calls and reports the misuse first.
#   edges/a_fault_without_address_*: read through a misaligned
#     non-canonical pointer on purpose; UBSan stops the misaligned load
#     first. edges/with_process_vm_readv_refused_the_report_is_still_whole
#     expects the fault on write_to_null's first instruction, which ASan's
#     check of the address comes before.
#   capture_exact/swapcontext_between_two_stacks: ASan warns that it does
#     not support swapcontext, and any report fails the run.
#   naming/static_program_*: gcc cannot link a sanitized program -static
#     (tests/tests.mk does not build their fixtures in this pass).
#   leaks/a_state_blob_on_a_pipe_is_read_as_a_blob: saves its blob with
#     state_program, which links the hooks library (see test_state).
# The tests that replace malloc in test_fatal.c (the_handler_never_allocates),
# test_threads.c (the_gathering_never_allocates)
# and test_fd_errors.c (backtrace_symbols_out_of_memory_is_null_enomem) are
# compiled out under ASan (#ifndef __SANITIZE_ADDRESS__): their malloc
# would replace ASan's for every test of the file.
ASAN_FILTER_test_fatal          := !(fatal/integer_divide_by_zero)
ASAN_FILTER_test_print_trace    := !(backtrace_resolve/covers_every_address_and_libc)
ASAN_FILTER_test_hostile_context := !(hostile_context/garbage_stack_ends_the_walk)
ASAN_FILTER_test_leaks          := !(leaks/reads_the_hooks_library_trace_with_stacks|$\
	leaks/a_state_blob_on_a_pipe_is_read_as_a_blob)
ASAN_FILTER_test_naming         := !(naming/static_program_*)
ASAN_FILTER_test_capture_exact  := !(capture_exact/swapcontext_between_two_stacks)
ASAN_FILTER_test_fatal_edges    := !(edges/a_use_after_free_through_the_fill_says_the_heap_cannot_tell|$\
	edges/a_fifo_as_heap_report_file_does_not_hang_free|edges/a_fault_without_address_*|$\
	edges/with_process_vm_readv_refused_the_report_is_still_whole)
#   dlopen/caller_*: libasan interposes dlopen too, and calls glibc's from
#     itself: the program's RUNPATH and $ORIGIN are lost before our dlopen
#     is reached (ASan's limitation, seen: "cannot open shared object").
#   dlopen/preloaded_hooks_library_names_the_module: the hooks library's
#     malloc beside ASan's, as for test_hooks.
#   dlopen/dlopened_library_backtraces_in_threads: compares with glibc's
#     backtrace(), which libasan intercepts: one frame more, its own.
ASAN_FILTER_test_dlopen         := !(dlopen/caller_*|dlopen/preloaded_hooks_library_names_the_module|$\
	dlopen/dlopened_library_backtraces_in_threads)
#   index_at_crash/main_starts_with_errno_0_under_the_preloaded_library:
#     libasan's own start-up, with log_path=, leaves errno EEXIST (17) at
#     main in the fixture run with no library preloaded at all (seen).
ASAN_FILTER_test_index_at_crash := !(index_at_crash/main_starts_with_errno_0_under_the_preloaded_library)

ASAN_ALL       := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c tests/unit/internal_*.c \
	tests/unit/hooks_*.c))
ASAN_RUN       := $(filter-out $(ASAN_SKIP),$(ASAN_ALL))

# handle_*=0: the tests crash on purpose into the library's handler, which
# must see the signal, not ASan's (and no ASan alternate stack either).
# verify_asan_link_order=0: execinfo_ex_run and test_fatal preload the
# (ASan) library into programs (python3, sh, crash_static), where libasan
# comes after it. log_path: every process's report lands in ASAN_LOGS,
# whatever its test does with its stderr. exitcode: a status no test
# expects from a child.
ASAN_OPTIONS_RUN := handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:$\
	allow_user_segv_handler=1:use_sigaltstack=0:detect_leaks=1:verify_asan_link_order=0:$\
	exitcode=86:log_path=$(ASAN_LOGS)/asan
UBSAN_OPTIONS_RUN := halt_on_error=1:print_stacktrace=1:exitcode=87
LSAN_OPTIONS_RUN  := suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0

# test_leaks: its own process keeps scratch strings (paths, outputs) to its
# exit; the tool it runs is checked for leaks, through a view of the build
# whose bin/execinfo_ex_leaks is tests/sanitize/leaks_wrapper.sh.
ASAN_VIEW      := $(CURDIR)/$(ASAN_DIR)/view
ASAN_ENV_test_leaks := EXECINFO_EX_BUILD=$(ASAN_VIEW) \
	ASAN_OPTIONS=$(ASAN_OPTIONS_RUN):detect_leaks=0 \
	SANITIZE_LEAKS_TOOL=$(CURDIR)/$(ASAN_DIR)/bin/execinfo_ex_leaks \
	SANITIZE_LEAKS_RUNNER='env ASAN_OPTIONS=$(ASAN_OPTIONS_RUN)'

# The recursive make: the same rules, another BUILD, CC with the
# sanitizers (so that the tests, the tools and the fixtures are built and
# linked with them too). In it, the API tests get tests/sanitize/asan_api.h
# (libasan interposes backtrace and backtrace_symbols).
ifeq ($(SANITIZE_PASS),asan)
$(BUILD)/tests/test_%: TEST_CFLAGS += -include tests/sanitize/asan_api.h \
	-DEXECINFO_EX_SONAME='"$(SONAME)"'
$(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c)): tests/sanitize/asan_api.h
endif

SANITIZE_TEST_ENV = FIXTURE_LIB=$(CURDIR)/$(1)/tests/fixture_lib.so \
	EXECINFO_EX_LIBRARY=$(CURDIR)/$(1)/libexecinfo_ex.so.$(VERSION) \
	EXECINFO_EX_TESTS=$(CURDIR)/$(1)/tests EXECINFO_EX_BUILD=$(CURDIR)/$(1) \
	EXECINFO_EX_RUN=$(CURDIR)/$(1)/bin/execinfo_ex_run

# $(call sanitize_run,LOGS,NAME,COMMAND[,LINES]): run COMMAND, its output
# to LOGS/NAME.out (the last LINES shown, 40 by default), its status to
# LOGS/NAME.status.
define sanitize_run
	@echo "== $(2)"; $(3) > $(1)/$(2).out 2>&1; echo $$? > $(1)/$(2).status; \
	  grep -v -E '^\[(RUN |PASS)\]' $(1)/$(2).out | tail -n $(if $(4),$(4),40)
endef

define asan_test
$(call sanitize_run,$(ASAN_LOGS),$(1),env $(call SANITIZE_TEST_ENV,$(ASAN_DIR)) \
	ASAN_OPTIONS=$(ASAN_OPTIONS_RUN) UBSAN_OPTIONS=$(UBSAN_OPTIONS_RUN) LSAN_OPTIONS=$(LSAN_OPTIONS_RUN) \
	$(ASAN_ENV_$(1)) $(SANITIZE_NICE) $(ASAN_DIR)/tests/$(1) --jobs $(SANITIZE_JOBS) --timeout 120 \
	$(if $(ASAN_FILTER_$(1)),--filter '$(ASAN_FILTER_$(1))'))

endef

# The leak tool, with LeakSanitizer, on a real trace and a real state blob
# (made by the normal build's fixtures, which need the hooks library).
define asan_tool
$(call sanitize_run,$(ASAN_LOGS),$(1),env ASAN_OPTIONS=$(ASAN_OPTIONS_RUN) \
	UBSAN_OPTIONS=$(UBSAN_OPTIONS_RUN) LSAN_OPTIONS=$(LSAN_OPTIONS_RUN) \
	sh tests/sanitize/expect_status.sh $(3) $(SANITIZE_NICE) $(ASAN_DIR)/bin/execinfo_ex_leaks $(2),1)

endef

asan-build:
	$(SANITIZE_NICE) $(MAKE) --no-print-directory SANITIZE_PASS=asan BUILD=$(ASAN_DIR) \
		CC='$(ASAN_CC)' CFLAGS='-O1 -g' all $(ASAN_RUN:%=$(ASAN_DIR)/tests/%)

test-asan: asan-build sanitize-inputs
	@rm -rf $(ASAN_LOGS) && mkdir -p $(ASAN_LOGS) $(ASAN_VIEW)/bin
	@ln -sf $(CURDIR)/tests/sanitize/leaks_wrapper.sh $(ASAN_VIEW)/bin/execinfo_ex_leaks
	@echo "== ASan + UBSan: $(words $(ASAN_RUN)) test binaries (skipped: $(ASAN_SKIP))"
	$(foreach t,$(ASAN_RUN),$(call asan_test,$(t)))
	$(call asan_tool,tool_trace,$(SANITIZE_INPUTS)/trace,1)
	$(call asan_tool,tool_blob,$(SANITIZE_INPUTS)/before.blob,1)
	$(call asan_tool,tool_blobs,$(SANITIZE_INPUTS)/before.blob $(SANITIZE_INPUTS)/after.blob,1)
	$(call asan_tool,tool_json,--json --stacks 3 $(SANITIZE_INPUTS)/trace,1)
	@sh tests/sanitize/check_logs.sh $(ASAN_LOGS)

# ---- Valgrind -------------------------------------------------------------------
VALGRIND_DIR   := $(BUILD)/valgrind
VALGRIND_LOGS  := $(CURDIR)/$(VALGRIND_DIR)/logs
# Criterion re-executes the test binary for each test: --trace-children
# follows it there; the system's programs the tests run (sh, python3, cc)
# are not followed.
VALGRIND_TOOL  := valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --num-callers=30 \
	--suppressions=$(CURDIR)/tests/sanitize/valgrind.supp --log-file=$(VALGRIND_LOGS)/vg.%p
VALGRIND       := $(VALGRIND_TOOL) --trace-children=yes \
	--trace-children-skip='/bin/*,/sbin/*,/usr/*,*/python3*,*/breakpad/*'

# The normal world: the internal modules and the API tests that neither
# crash on purpose nor replace malloc. Not under Valgrind:
#   test_fatal, test_fatal_recovery, test_signal_safety, test_small_stack:
#     they crash on purpose (memcheck reports each fault as an invalid
#     access), in children, into signal handlers on small stacks.
#   test_hooks, test_mtrace, test_state, test_leak_check: the hooks library
#     replaces malloc, which memcheck must own (test_leak_check runs
#     valgrind itself, on its fixtures, as a reference).
#   fd_errors/backtrace_symbols_out_of_memory_is_null_enomem: its own
#     malloc is replaced by memcheck's, so it cannot fail.
#   backtrace_ucontext/first_frame_is_the_faulting_instruction: writes to
#     address 8 on purpose.
#   elf_forms/old_zdebug_sections_give_names_and_lines and
#     elf_forms/zstd_debug_sections_keep_names: Valgrind 3.19's own reader
#     of debug information asserts (priv_image.h:259, cur_read_strdup) on
#     the .zdebug and zstd-compressed sections of the library they dlopen.
#   handler_config/views_are_never_torn_across_threads_or_signals: a race
#     test that publishes until 1000 reader views overlapped a publish;
#     Valgrind runs one thread at a time, and may never let the reader in
#     while the writer publishes (the test would run to its timeout).
#   handler_config/a_view_is_never_older_than_the_last_publish: a race
#     test of 1000 child processes, each a reader thread spinning while
#     the writer publishes: one thread at a time, and Valgrind's start-up
#     in each child, would take minutes.
# test_leaks runs natively, the tool it runs under Valgrind (the view).
VALGRIND_RUN   := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/internal_*.c tests/unit/hooks_*.c)) \
	test_backtrace test_print_trace test_hostile_context test_fd_errors \
	$(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_elf_forms.c))
VALGRIND_FILTER_test_fd_errors   := !(fd_errors/backtrace_symbols_out_of_memory_is_null_enomem)
VALGRIND_FILTER_test_print_trace := !(backtrace_ucontext/first_frame_is_the_faulting_instruction)
VALGRIND_FILTER_internal_handler_config := !(handler_config/views_are_never_torn_across_threads_or_signals|$\
	handler_config/a_view_is_never_older_than_the_last_publish)
VALGRIND_FILTER_test_elf_forms   := !(elf_forms/old_zdebug_sections_give_names_and_lines|$\
	elf_forms/zstd_debug_sections_keep_names)
# The index cache's eleven crash tests run a program that crashes on
# purpose: under Valgrind its fault is an error, and Valgrind's own death by
# the signal is not the program's (as test_fatal's crash tests, not run
# here). a_preloaded_process_does_not_load_libdw_cold_or_warm crashes one
# to fill the cache (issue 26: its second stage stores it).
VALGRIND_FILTER_internal_index_cache := !(index_cache/a_crash_names_the_same_frames_with_and_without_it|$\
	index_cache/with_every_line_table_too|index_cache/damaged_inline_arrays_are_refused|$\
	index_cache/a_debug_root_given_later_is_searched|$\
	index_cache/a_module_built_with_debug_info_gets_lines_by_default|$\
	index_cache/a_crash_in_a_constructor_is_named|$\
	index_cache/a_crash_at_the_first_instruction_of_main_is_named|$\
	index_cache/a_crash_with_changed_bytes_in_every_file|$\
	index_cache/a_crash_with_every_file_truncated|$\
	index_cache/a_crash_with_every_file_damaged_under_its_stamp|$\
	index_cache/a_preloaded_process_does_not_load_libdw_cold_or_warm)

VALGRIND_VIEW  := $(CURDIR)/$(VALGRIND_DIR)/view

define valgrind_test
$(call sanitize_run,$(VALGRIND_LOGS),$(1),env $(call SANITIZE_TEST_ENV,$(BUILD)) \
	$(SANITIZE_NICE) $(VALGRIND) $(BUILD)/tests/$(1) --jobs $(SANITIZE_JOBS) --timeout 300 \
	$(if $(VALGRIND_FILTER_$(1)),--filter '$(VALGRIND_FILTER_$(1))'))

endef

define valgrind_tool
$(call sanitize_run,$(VALGRIND_LOGS),$(1),sh tests/sanitize/expect_status.sh $(3) \
	$(SANITIZE_NICE) $(VALGRIND) $(BUILD)/bin/execinfo_ex_leaks $(2),1)

endef

test-valgrind: all $(patsubst %,$(BUILD)/tests/%,$(VALGRIND_RUN) test_leaks) sanitize-inputs
	@rm -rf $(VALGRIND_LOGS) && mkdir -p $(VALGRIND_LOGS) $(VALGRIND_VIEW)/bin
	@ln -sf $(CURDIR)/tests/sanitize/leaks_wrapper.sh $(VALGRIND_VIEW)/bin/execinfo_ex_leaks
	@for f in $(BUILD)/lib*.so*; do ln -sf $(CURDIR)/$$f $(VALGRIND_VIEW)/; done
	@echo "== Valgrind: $(words $(VALGRIND_RUN)) test binaries, test_leaks's tool runs, the tool"
	$(foreach t,$(VALGRIND_RUN),$(call valgrind_test,$(t)))
	$(call sanitize_run,$(VALGRIND_LOGS),test_leaks,env $(call SANITIZE_TEST_ENV,$(BUILD)) \
		EXECINFO_EX_BUILD=$(VALGRIND_VIEW) SANITIZE_LEAKS_TOOL=$(CURDIR)/$(BUILD)/bin/execinfo_ex_leaks \
		SANITIZE_LEAKS_RUNNER="$(VALGRIND_TOOL)" \
		$(SANITIZE_NICE) $(BUILD)/tests/test_leaks --jobs $(SANITIZE_JOBS) --timeout 300)
	$(call valgrind_tool,tool_trace,$(SANITIZE_INPUTS)/trace,1)
	$(call valgrind_tool,tool_blob,$(SANITIZE_INPUTS)/before.blob,1)
	$(call valgrind_tool,tool_blobs,$(SANITIZE_INPUTS)/before.blob $(SANITIZE_INPUTS)/after.blob,1)
	$(call valgrind_tool,tool_json,--json --stacks 3 $(SANITIZE_INPUTS)/trace,1)
	@sh tests/sanitize/check_logs.sh $(VALGRIND_LOGS)

# ---- inputs for the leak tool --------------------------------------------------
# A real trace with stacks, and two real state blobs, from the normal
# build's fixtures (as tests/unit/test_leaks.c and test_state.c make them).
SANITIZE_INPUTS := $(BUILD)/sanitize-inputs

sanitize-inputs: all $(BUILD)/tests/mtrace_program $(BUILD)/tests/state_program
	@mkdir -p $(SANITIZE_INPUTS)
	MALLOC_TRACE=$(SANITIZE_INPUTS)/trace EXECINFO_EX_OPTIONS=mtrace_frames=8 \
		$(BUILD)/tests/mtrace_program leaks > /dev/null
	EXECINFO_EX_OPTIONS= $(BUILD)/tests/state_program save2 $(SANITIZE_INPUTS)/before.blob \
		$(SANITIZE_INPUTS)/after.blob

.PHONY: asan-build test-asan test-valgrind sanitize-inputs
