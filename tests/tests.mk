# Tests: `make test` builds and runs all of them (unit, checks, integration,
# stress); each Criterion test runs in its own process with a time bound.
#   tests/unit/test_*.c           the public API, linked to the shared library
#   tests/unit/internal_*.c       internal modules, linked to the static library
#   tests/stress/test_*.c         threads and signals for a bounded time
#   tests/tools/*.sh, *.py        symbol and safety checks of the built objects
#   tests/integration/run.sh      install, build programs as a user would, run
#   tests/readme/run.sh           the command blocks of README.md, as written

TEST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Iinclude -Isrc -Itests $(DEP_CFLAGS) $(shell $(PKG_CONFIG) --cflags libunwind)
TEST_LIBS   := -lcriterion -lunwind -ldl -lpthread
API_TESTS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
INTERNAL_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/internal_*.c))
HOOKS_TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/hooks_*.c))
# Tests of one architecture's code or encodings, built for it alone:
# x86-64's instruction decoder, its fault access (x86 instructions in the
# test), its DWARF register numbers in hand-made CFI.
ARCH_TESTS_x86_64 := internal_instruction_x86_64 test_fault_access internal_dwarf
ARCH_TESTS_aarch64 :=
OTHER_ARCH_TESTS := $(addprefix $(BUILD)/tests/,$(filter-out $(ARCH_TESTS_$(ARCH)), \
	$(ARCH_TESTS_x86_64) $(ARCH_TESTS_aarch64)))
API_TESTS      := $(filter-out $(OTHER_ARCH_TESTS),$(API_TESTS))
INTERNAL_TESTS := $(filter-out $(OTHER_ARCH_TESTS),$(INTERNAL_TESTS))
STRESS_TESTS   := $(patsubst tests/stress/%.c,$(BUILD)/tests/stress_%,$(wildcard tests/stress/test_*.c))
TEST_FIXTURES  := $(BUILD)/tests/fixture_lib.so $(BUILD)/tests/crash_static $(BUILD)/tests/heap_misuse \
	$(BUILD)/tests/mtrace_program $(BUILD)/tests/state_program $(BUILD)/tests/freed_pointer \
	$(BUILD)/tests/packed_functions.so $(BUILD)/tests/odd_symbols.so $(BUILD)/tests/alias_program \
	$(BUILD)/tests/deepbind_host $(BUILD)/tests/deepbind_plugin.so \
	$(BUILD)/tests/fixture_ctor_lib.so $(BUILD)/tests/dlopen_caller $(BUILD)/tests/dlopen_caller_rpath \
	$(BUILD)/tests/dlopen_crash $(BUILD)/tests/dlopen_backtrace $(BUILD)/tests/cxx_throw.so $(BUILD)/tests/cache_probe $(BUILD)/tests/cache_first_use \
	$(BUILD)/tests/early_crash $(BUILD)/tests/stage_crash $(BUILD)/tests/symbols_fd_program $(BUILD)/tests/silent_symbolizer \
	$(BUILD)/tests/inline_program $(BUILD)/tests/inline_program_cxx $(BUILD)/tests/cxx_names \
	$(BUILD)/tests/profile_program $(BUILD)/tests/profile_program_cxx \
	$(BUILD)/tests/vector_after_free \
	$(BUILD)/tests/guard_access $(BUILD)/tests/guard_vector $(BUILD)/tests/guard_owner
# gcc cannot link a sanitized program -static: test-asan leaves their tests out.
# test_leak_check's programs leak on purpose, one build with -fsanitize=leak,
# beside the hooks library: test-asan leaves test_leak_check out.
ifneq ($(SANITIZE_PASS),asan)
TEST_FIXTURES  += $(BUILD)/tests/static_program $(BUILD)/tests/static_program_glibc \
	$(BUILD)/tests/leak_program $(BUILD)/tests/leak_program_lsan $(BUILD)/tests/leak_module.so \
	$(BUILD)/tests/leak_program_cxx $(BUILD)/tests/leak_program_cxx_lsan $(BUILD)/tests/leak_churn
endif
CRITERION_RUN  := --jobs 2 --timeout 60

$(BUILD)/tests/fixture_lib.so: tests/fixtures/fixture_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared $< -o $@

# test_capture_exact.c: a C++ exception thrown through C++ and C frames.
$(BUILD)/tests/cxx_throw.so: tests/fixtures/cxx_throw.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fPIC -shared $< -o $@

# test_demangle.c: C++ names of every kind on the stack; -rdynamic, so that
# glibc's backtrace_symbols_fd names the exported ones for the comparison.
$(BUILD)/tests/cxx_names: tests/fixtures/cxx_names.cpp all
	@mkdir -p $(dir $@)
	$(CXX) -O0 -g -rdynamic -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -ldl \
		-Wl,-rpath,$(CURDIR)/$(BUILD)

# test_profile.c: sites with known answers; no sibling calls, so that each
# site's frame is on its allocation's stack.
$(BUILD)/tests/profile_program: tests/fixtures/profile_program.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fno-optimize-sibling-calls $< -o $@ -ldl

$(BUILD)/tests/profile_program_cxx: tests/fixtures/profile_program_cxx.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fno-optimize-sibling-calls $< -o $@

# It dlopens that fixture; libstdc++ is loaded at start all the same, as
# ASan's __cxa_throw interceptor needs (test-asan: a CHECK failure otherwise).
$(BUILD)/tests/test_capture_exact: TEST_LIBS += -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state

$(BUILD)/tests/fixture_ctor_lib.so: tests/fixtures/fixture_ctor_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared $< -o $@

# test_dlopen.c: a plugin found only along the program's RUNPATH (and
# through $$ORIGIN), which our dlopen must find as glibc's does.
$(BUILD)/tests/plugin_dir/libfixture_plugin.so: tests/fixtures/fixture_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared -Wl,-soname,libfixture_plugin.so $< -o $@

$(BUILD)/tests/dlopen_caller: tests/fixtures/dlopen_caller.c $(BUILD)/tests/plugin_dir/libfixture_plugin.so all
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,--enable-new-dtags,-rpath,$(CURDIR)/$(BUILD):$(CURDIR)/$(BUILD)/tests/plugin_dir

$(BUILD)/tests/dlopen_caller_rpath: tests/fixtures/dlopen_caller.c $(BUILD)/tests/plugin_dir/libfixture_plugin.so all
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Iinclude -DINDEXED_AT_ONCE $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,--disable-new-dtags,-rpath,$(CURDIR)/$(BUILD):$(CURDIR)/$(BUILD)/tests/plugin_dir

# internal_index_cache.c: the index cache's statistics after the load.
$(BUILD)/tests/cache_probe: tests/fixtures/cache_probe.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Iinclude -Isrc $(DEP_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS)

# internal_index_cache.c: when the index cache's files are mapped.
$(BUILD)/tests/cache_first_use: tests/fixtures/cache_first_use.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Iinclude -Isrc $(DEP_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS)

# test_second_stage.c: a crash in a static function, inlined calls, with
# what the second stage needs taken away; a symbolizer that never answers.
$(BUILD)/tests/stage_crash: tests/fixtures/stage_crash.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $< -o $@

# ... and glibc's backtrace_symbols_fd in a program the library is only
# preloaded into (-rdynamic: glibc names the exported functions too).
$(BUILD)/tests/symbols_fd_program: tests/fixtures/symbols_fd_program.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -rdynamic $< -o $@

$(BUILD)/tests/silent_symbolizer: tests/fixtures/silent_symbolizer.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $< -o $@

# Without our library: test_dlopen.c runs it under LD_PRELOAD.
$(BUILD)/tests/dlopen_crash: tests/fixtures/dlopen_crash.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $< -o $@ -ldl

# Without our library: internal_index_cache.c runs it under LD_PRELOAD, and
# it crashes in its constructor or at main's first instruction (main in
# assembly: one file per architecture, as the Makefile's *_SOURCE).
EARLY_CRASH_MAIN_SOURCE := tests/fixtures/early_crash_main_$(ARCH).S
$(BUILD)/tests/early_crash: tests/fixtures/early_crash.c $(EARLY_CRASH_MAIN_SOURCE)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $^ -o $@

# Without our library either: it dlopens it, and calls its backtrace in
# threads (test_dlopen.c).
$(BUILD)/tests/dlopen_backtrace: tests/fixtures/dlopen_backtrace.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $< -o $@ -ldl -lpthread

# -Os: the functions follow each other with no padding (test_naming.c).
# These two are built without the sanitizers' flags even by test-asan
# (the compiler alone, the first word of CC): their code layout and their
# deliberate NULL store are what the tests look at.
LAYOUT_CC := $(firstword $(CC))

$(BUILD)/tests/packed_functions.so: tests/fixtures/packed_functions.c
	@mkdir -p $(dir $@)
	$(LAYOUT_CC) -Os -g -fPIC -shared $< -o $@

$(BUILD)/tests/odd_symbols.so: tests/fixtures/odd_symbols.c
	@mkdir -p $(dir $@)
	$(LAYOUT_CC) -O1 -g -fPIC -shared $< -o $@

# The flags with which GCC makes a ".localalias" of a global function.
$(BUILD)/tests/alias_program: tests/fixtures/alias_program.c all
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -fno-semantic-interposition -Iinclude $< -o $@ \
		-L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

# Fully static, as a user links it with the archive; and with glibc alone.
$(BUILD)/tests/static_program: tests/fixtures/static_program.c all
	@mkdir -p $(dir $@)
	$(CC) -static -O1 -g -Iinclude $< -o $@ $(STATIC) $(shell $(PKG_CONFIG) --static --libs $(PKGS)) $(DEMANGLE_LIBS) \
		-lpthread 2>&1 | { grep -v 'statically linked applications' || true; }

$(BUILD)/tests/static_program_glibc: tests/fixtures/static_program.c
	@mkdir -p $(dir $@)
	$(CC) -static -O1 -g -DGLIBC_ONLY $< -o $@

# A plugin host (plain: the tests preload the hooks) and its plugin.
$(BUILD)/tests/deepbind_host: tests/fixtures/deepbind_host.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $< -o $@ -ldl

$(BUILD)/tests/deepbind_plugin.so: tests/fixtures/deepbind_plugin.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared -fno-builtin $< -o $@

# test_inline.c: -O2, a crash two inlined calls deep, compared with
# addr2line -i (built without the sanitizers' flags: the code layout is
# what the test reads).
$(BUILD)/tests/inline_program: tests/fixtures/inline_program.c all
	@mkdir -p $(dir $@)
	$(LAYOUT_CC) -O2 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/tests/inline_program_cxx: tests/fixtures/inline_program_cxx.cpp all
	@mkdir -p $(dir $@)
	$(firstword $(CXX)) -O2 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/tests/crash_static: tests/fixtures/crash_static.c all
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

# test_leak_check.c: the same sources under our leak check, under valgrind
# (the same binary) and built with -fsanitize=leak (LSan, the reference).
LEAK_FIXTURE_FLAGS := -O1 -g -Wall -Wextra
$(BUILD)/tests/leak_module.so: tests/fixtures/leak_module.c
	@mkdir -p $(dir $@)
	$(CC) $(LEAK_FIXTURE_FLAGS) -fPIC -shared $< -o $@

$(BUILD)/tests/leak_program: tests/fixtures/leak_program.c
	@mkdir -p $(dir $@)
	$(CC) $(LEAK_FIXTURE_FLAGS) $< -o $@ -lpthread -ldl

$(BUILD)/tests/leak_churn: tests/fixtures/leak_churn.c
	@mkdir -p $(dir $@)
	$(CC) $(LEAK_FIXTURE_FLAGS) $< -o $@ -lpthread -ldl

$(BUILD)/tests/leak_program_lsan: tests/fixtures/leak_program.c
	@mkdir -p $(dir $@)
	$(CC) $(LEAK_FIXTURE_FLAGS) -fsanitize=leak $< -o $@ -lpthread -ldl

$(BUILD)/tests/leak_program_cxx: tests/fixtures/leak_program_cxx.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(LEAK_FIXTURE_FLAGS) $< -o $@

$(BUILD)/tests/leak_program_cxx_lsan: tests/fixtures/leak_program_cxx.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(LEAK_FIXTURE_FLAGS) -fsanitize=leak $< -o $@

# test_heap_report.c: issue 25's vector write after free, -O0 as a user's
# debug build (the reference is not kept in a register).
$(BUILD)/tests/vector_after_free: tests/fixtures/vector_after_free.cpp all
	@mkdir -p $(dir $@)
	$(CXX) -O0 -g $< -o $@ -L$(BUILD) -Wl,--no-as-needed -lexecinfo_ex_hooks -Wl,--as-needed \
		-Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/tests/heap_misuse: tests/fixtures/heap_misuse.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Wno-alloc-size-larger-than -fno-builtin -Iinclude $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks \
		-lpthread -Wl,-rpath,$(CURDIR)/$(BUILD)

# test_guard_pages.c: accesses a guard page stops at the instruction.
# Its vector moves are the architecture's (guard_access_ARCH.c).
$(BUILD)/tests/guard_access: tests/fixtures/guard_access.c tests/fixtures/guard_access_$(ARCH).c \
	tests/fixtures/guard_access.h all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -fno-builtin -Iinclude $(filter %.c,$^) -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks -Wl,-rpath,$(CURDIR)/$(BUILD)

# A program that owns SIGSEGV, or the crash lead, over a guard page's fault.
$(BUILD)/tests/guard_owner: tests/fixtures/guard_owner.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -fno-builtin -Iinclude $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/tests/guard_vector: tests/fixtures/guard_vector.cpp all
	@mkdir -p $(dir $@)
	$(CXX) -O0 -g $< -o $@ -L$(BUILD) -Wl,--no-as-needed -lexecinfo_ex_hooks -Wl,--as-needed \
		-Wl,-rpath,$(CURDIR)/$(BUILD)

# A use after free that the hooks library's free fill turns into a
# general-protection fault (tests/unit/test_fatal_edges.c).
$(BUILD)/tests/freed_pointer: tests/fixtures/freed_pointer.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -fno-builtin $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks -Wl,-rpath,$(CURDIR)/$(BUILD)

# -O0: each call on its own line, as the test expects them.
$(BUILD)/tests/mtrace_program: tests/fixtures/mtrace_program.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O0 -g -Wall -Wextra -Wno-unused-result -fno-builtin $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks -lpthread -Wl,-rpath,$(CURDIR)/$(BUILD)

# With the blob reader, to look inside the blobs it gets.
$(BUILD)/tests/state_program: tests/fixtures/state_program.c src/hooks/state_blob.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -fno-builtin -Iinclude -Isrc $< src/hooks/state_blob.c \
		-o $@ -L$(BUILD) -lexecinfo_ex_hooks -lpthread -Wl,-rpath,$(CURDIR)/$(BUILD)

# test_minidump.c: Breakpad's own processor is the judge, fetched with npm
# (tests/tools/get_breakpad_tools.sh; .ci/run fetches it first). A program
# with threads, built with -g for dump_syms, linked with a library that
# has no build-id (Breakpad's fallback identifier).
BREAKPAD_TOOLS := $(BUILD)/breakpad/minidump_stackwalk

$(BREAKPAD_TOOLS): tests/tools/get_breakpad_tools.sh
	sh tests/tools/get_breakpad_tools.sh $(BUILD)/breakpad

$(BUILD)/tests/libminidump_plain.so: tests/fixtures/minidump_plain_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared -Wl,--build-id=none -Wl,-soname,libminidump_plain.so $< -o $@

$(BUILD)/tests/minidump_threads: tests/fixtures/minidump_threads.c $(BUILD)/tests/libminidump_plain.so all
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -L$(BUILD)/tests -lminidump_plain \
		-lpthread -Wl,-rpath,$(CURDIR)/$(BUILD):$(CURDIR)/$(BUILD)/tests

$(BUILD)/tests/test_minidump: $(BUILD)/tests/minidump_threads $(BREAKPAD_TOOLS)
$(BUILD)/tests/internal_minidump: $(BREAKPAD_TOOLS)

# -rdynamic: so that glibc's backtrace_symbols can name the same frames,
# for the line-for-line comparison; the integration tests build without it.
$(BUILD)/tests/test_%: tests/unit/test_%.c tests/support.h tests/crash_helpers.h all $(TEST_FIXTURES)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -rdynamic $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,-rpath,$(CURDIR)/$(BUILD) $(TEST_LIBS)

# internal_demangle.c: functions with hostile mangled names.
$(BUILD)/tests/hostile_mangled.so: tests/fuzz/hostile_mangled.py
	@mkdir -p $(dir $@)
	python3 $< $(BUILD)/tests/hostile_mangled.c
	$(CC) -O1 -fPIC -shared $(BUILD)/tests/hostile_mangled.c -o $@

$(BUILD)/tests/internal_%: tests/unit/internal_%.c tests/support.h all $(BUILD)/tests/cache_probe \
	$(BUILD)/tests/dlopen_crash $(BUILD)/tests/fixture_lib.so $(BUILD)/tests/inline_program \
	$(BUILD)/tests/hostile_mangled.so $(BUILD)/tests/early_crash
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS) $(TEST_LIBS)

# The hook layer's modules, alone (not interposing malloc).
$(BUILD)/tests/hooks_%: tests/unit/hooks_%.c tests/support.h all
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(HOOKS_INTERNAL) $(STATIC) $(DEP_LIBS) $(HOOKS_LIBS) $(TEST_LIBS)

$(BUILD)/tests/stress_%: tests/stress/%.c tests/support.h all $(TEST_FIXTURES)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,-rpath,$(CURDIR)/$(BUILD) $(TEST_LIBS)

test: test-checks test-unit test-integration test-readme test-stress

test-unit: $(API_TESTS) $(INTERNAL_TESTS) $(HOOKS_TESTS)
	@set -e; for t in $^; do echo "== $$t"; \
	  FIXTURE_LIB=$(CURDIR)/$(BUILD)/tests/fixture_lib.so \
	  EXECINFO_EX_LIBRARY=$(CURDIR)/$(SHARED) EXECINFO_EX_TESTS=$(CURDIR)/$(BUILD)/tests \
	  EXECINFO_EX_BUILD=$(CURDIR)/$(BUILD) \
	  EXECINFO_EX_RUN=$(CURDIR)/$(BUILD)/bin/execinfo_ex_run $$t $(CRITERION_RUN); done

test-stress: $(STRESS_TESTS)
	@set -e; for t in $^; do echo "== $$t"; \
	  FIXTURE_LIB=$(CURDIR)/$(BUILD)/tests/fixture_lib.so $$t $(CRITERION_RUN); done

test-checks: all
	sh tests/tools/check_signal_safe.sh $(SAFE_OBJECTS)
	sh tests/tools/check_bound_at_load.sh $(SHARED) $(filter $(SAFE_OBJECTS),$(OBJECTS))
	sh tests/tools/check_bound_at_load.sh $(HOOKS_SHARED) \
	  $(filter $(SAFE_OBJECTS),$(HOOKS_OBJECTS) $(HOOKS_BASE) $(HOOKS_FORWARD))
	sh tests/tools/check_exports.sh $(SHARED) src/exports.map pthread_create dlopen dlmopen dlclose
	sh tests/tools/check_exports.sh $(HOOKS_SHARED) src/hooks/exports.map $(HOOKS_REPLACED)
	python3 tests/tools/check_safety.py src/exports.map src/hooks/exports.map
	sh tests/fuzz/check_run_fuzzers.sh

test-integration: all
	sh tests/integration/run.sh

# Issue 13: every command block of README.md, as written, in a fresh prefix.
test-readme: all
	sh tests/readme/run.sh
