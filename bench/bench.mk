# bench/bench.mk: `make bench` builds the benchmark programs into
# build/bench/ and runs build/bench/bench, which prints the tables and the
# summary against the targets (docs/PERFORMANCE.md). Included by Makefile.
#
# Every program is -O2 -g and without -rdynamic, as a user's would be. The
# ones that use our library link it first (before libunwind and the
# implicit libc), so that the plain name backtrace binds to ours; glibc's
# functions are then reached with dlsym (bench/glibc.c checks both).
# libunwind is only a contender: our library walks with its own CFI reader
# and does not link it, so only the programs that call unw_backtrace
# themselves (bench, first_call_helper_libunwind) get -lunwind.

BENCH_DIR          := $(BUILD)/bench
# The whole-process benchmarks run on one CPU (the other helpers' load
# moves between the two; PERFORMANCE.md): `make bench BENCH_PIN=` unpins.
BENCH_PIN          ?= taskset -c 1
BENCH_THREADS_LOAD_RUNS ?= 11

# BENCH_QUICK=1 (make bench-smoke, run by .ci/run): every benchmark builds
# and runs once with the fewest repetitions, so that one that cannot build
# or run fails CI; its numbers mean nothing. The C programs read
# BENCH_QUICK themselves (bench/timing.h); these are the others' knobs.
ifeq ($(BENCH_QUICK),1)
export BENCH_QUICK
export HEAP_BENCH_REPEATS := 1
export HEAP_BENCH_POOL_OPS := 20000
export HEAP_BENCH_CHURN_OPS := 20000
export HEAP_BENCH_PY_COUNT := 2000
export BENCH_DLOPEN_RUNS := 1
export BUDGET_OPS := 2000
BENCH_LOAD_RUNS := 1
BENCH_THREADS_LOAD_RUNS := 1
BENCH_THREADS_ARGS := -r 1 -R 1
BENCH_CRASH_LATENCY_ARGS := -r 1 -R 1
BENCH_STOP_ARGS := -r 1
BENCH_LEAKS_EVENTS := 10000
BENCH_INLINE_RUNS := 1
BENCH_REAL_RUNS := 1
BENCH_LEAK_COST_ARGS := 100000 1
else
BENCH_CRASH_LATENCY_ARGS := -r 5 -R 2
BENCH_LEAKS_EVENTS := 1000000
BENCH_INLINE_RUNS := 11
BENCH_REAL_RUNS := 3
BENCH_LEAK_COST_ARGS := 1000000 5
endif
BENCH_CFLAGS       := -std=gnu11 -O2 -g -Wall -Wextra -Iinclude
BENCH_OURS_LIBS    := -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)
BENCH_UNWIND_FLAGS := -DUNW_LOCAL_ONLY $(shell $(PKG_CONFIG) --cflags libunwind)
BENCH_UNWIND_LIBS  := $(shell $(PKG_CONFIG) --libs libunwind)
BENCH_HEADERS      := bench/bench.h bench/timing.h bench/handler_page.h include/execinfo_ex.h

BENCH_PARTS   := main glibc spawn capture capture_memo first_call symbols index_cost handler
BENCH_OBJECTS := $(BENCH_PARTS:%=$(BENCH_DIR)/obj/%.o)
BENCH_PROGRAMS := $(BENCH_DIR)/bench \
	$(BENCH_DIR)/first_call_helper_ours \
	$(BENCH_DIR)/first_call_helper_glibc \
	$(BENCH_DIR)/first_call_helper_libunwind \
	$(BENCH_DIR)/index_cost_helper \
	$(BENCH_DIR)/handler_crash_helper \
	$(BENCH_DIR)/handler_load_helper_plain \
	$(BENCH_DIR)/handler_load_helper_ours \
	$(BENCH_DIR)/handler_load_helper_static

# The heap benchmark's programs (its section is at the end of this file).
HEAP_BENCH_DIR      := $(BENCH_DIR)/heap
HEAP_BENCH_PROGRAMS := $(HEAP_BENCH_DIR)/heap_bench $(HEAP_BENCH_DIR)/churn \
	$(HEAP_BENCH_DIR)/churn_asan $(HEAP_BENCH_DIR)/pool $(HEAP_BENCH_DIR)/pool_asan $(HEAP_BENCH_DIR)/mtrace_start.so $(BUILD)/libexecinfo_ex_hooks.so \
	$(HEAP_BENCH_DIR)/leak_cost $(HEAP_BENCH_DIR)/leak_cost_lsan

# The dlopen benchmark's (its section is before the heap one's).
DLOPEN_BENCH_PROGRAMS := $(BENCH_DIR)/dlopen_bench $(BENCH_DIR)/dlopen_many_helper \
	$(BENCH_DIR)/many/module199.so

# The same C++ program built by clang, where clang++ is installed: clang
# puts no DW_AT_sibling in its DWARF, so libdw steps through every DIE of
# a subtree to find the DIE after it (docs/PERFORMANCE.md).
INLINE_CLANGXX := $(shell command -v clang++ 2>/dev/null)
INLINE_CLANG_PROGRAMS := $(if $(INLINE_CLANGXX),$(BENCH_DIR)/inline_cost_cxx_clang)

# The demangling benchmark's (its section is further down). Defined here,
# before the bench rule names them as prerequisites: make expands a rule's
# prerequisites where it reads the rule, and a variable defined later is
# empty there (a fresh checkout's make bench never built them).
DEMANGLE_BENCH_PROGRAMS := $(BENCH_DIR)/demangle_cost $(BENCH_DIR)/cxx_templates

bench: $(BENCH_PROGRAMS) $(HEAP_BENCH_PROGRAMS) $(BUILD)/bin/execinfo_ex_leaks $(DLOPEN_BENCH_PROGRAMS) \
	$(BENCH_DIR)/crash_latency $(BENCH_DIR)/crash_latency_helper \
	$(BENCH_DIR)/load_cost $(BENCH_DIR)/inline_cost_fixture $(BENCH_DIR)/inline_cost_cxx $(INLINE_CLANG_PROGRAMS) $(DEMANGLE_BENCH_PROGRAMS)
	$(BENCH_DIR)/bench
	$(DEMANGLE_BENCH_RUN)
	$(BENCH_DIR)/load_cost $(CURDIR)/$(BUILD) $(BENCH_LOAD_RUNS)
	$(BENCH_PIN) $(HEAP_BENCH_DIR)/heap_bench
	@echo "== one leak check with 1,000,000 live blocks, ours and LSan's (issue 24)"
	$(HEAP_BENCH_DIR)/leak_cost $(BENCH_LEAK_COST_ARGS)
	$(HEAP_BENCH_DIR)/leak_cost_lsan $(BENCH_LEAK_COST_ARGS)
	$(BENCH_DIR)/dlopen_bench
	@echo "== the every-thread report against eu-stack and gdb (issue 23; short: make bench-threads has more runs)"
	$(BENCH_DIR)/crash_latency $(BENCH_CRASH_LATENCY_ARGS)
	@echo "== execinfo_ex_leaks on generated traces of $(BENCH_LEAKS_EVENTS) events"
	sh tools/leaks/bench_leaks.sh $(BENCH_LEAKS_EVENTS) $(BUILD)/bin/execinfo_ex_leaks
	@echo "== the index with inlines=1 against inlines=0 (issue 15)"
	python3 bench/inline_cost.py $(BENCH_INLINE_RUNS) $(BENCH_DIR)/inline_cost_fixture $(BENCH_DIR)/inline_cost_cxx \
		$(INLINE_CLANG_PROGRAMS)

$(BENCH_DIR)/obj/%.o: bench/%.c $(BENCH_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(BENCH_FILE_FLAGS) -c $< -o $@

# capture.c calls unw_backtrace as a libunwind user would.
$(BENCH_DIR)/obj/capture.o: BENCH_FILE_FLAGS := $(BENCH_UNWIND_FLAGS)

$(BENCH_DIR)/bench: $(BENCH_OBJECTS) $(SHARED) $(BUILD)/libexecinfo_ex.so
	$(CC) $(BENCH_CFLAGS) -o $@ $(BENCH_OBJECTS) $(BENCH_OURS_LIBS) $(BENCH_UNWIND_LIBS) -ldl

# One source, three programs: ours (with our library), glibc (a program
# without our library), libunwind (a program with libunwind only).
$(BENCH_DIR)/first_call_helper_ours: bench/first_call_helper.c bench/timing.h $(SHARED) $(BUILD)/libexecinfo_ex.so
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DCONTENDER=0 $< -o $@ $(BENCH_OURS_LIBS) -ldl

$(BENCH_DIR)/first_call_helper_glibc: bench/first_call_helper.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DCONTENDER=1 $< -o $@ -ldl

$(BENCH_DIR)/first_call_helper_libunwind: bench/first_call_helper.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DCONTENDER=2 $(BENCH_UNWIND_FLAGS) $< -o $@ $(BENCH_UNWIND_LIBS) -ldl

# The static library, so that the hidden index_statistics and
# index_build_now are reachable. It needs only what the shared library
# links: $(DEP_LIBS) (libdw, libelf, pthread), no libunwind.
$(BENCH_DIR)/index_cost_helper: bench/index_cost_helper.c bench/timing.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS)

# What loading the libraries costs a process, with the index cache off,
# cold and warm (issue 14); `make bench-load` runs it alone.
$(BENCH_DIR)/load_cost: bench/load_cost.c $(SHARED) $(BUILD)/libexecinfo_ex_hooks.so \
		$(BENCH_DIR)/libempty_preload.so
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@

# The spawn mode's floor: an empty library, preloaded as ours are.
$(BENCH_DIR)/libempty_preload.so: bench/empty_preload.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -fPIC -shared $< -o $@

.PHONY: bench-load
bench-load: $(BENCH_DIR)/load_cost
	$(BENCH_DIR)/load_cost $(CURDIR)/$(BUILD) $(BENCH_LOAD_RUNS)

# ---- part 7: the fatal-signal handler (issue 3) ------------------------------
# The crash of 7a passes through the executable and four libraries, each
# linking the next: handler_crash_helper -> libhandler_m1.so -> m2 -> m3 -> m4
# (which faults). -O2 -g, -fPIC, no -rdynamic; found through the rpath.
BENCH_RPATH := -L$(BENCH_DIR) -Wl,-rpath,$(CURDIR)/$(BENCH_DIR)
BENCH_HANDLER_MODULES := $(foreach n,1 2 3 4,$(BENCH_DIR)/libhandler_m$(n).so)
BENCH_TINY_NUMBERS := 1 2 3 4 5 6 7 8 9 10
BENCH_TINY := $(foreach n,$(BENCH_TINY_NUMBERS),$(BENCH_DIR)/libhandler_tiny$(n).so)
BENCH_TINY_LIBS := $(BENCH_RPATH) $(foreach n,$(BENCH_TINY_NUMBERS),-lhandler_tiny$(n))
# Ours between tiny1 and tiny2: the loader then runs our constructor
# between theirs, whose time stamps bracket it (bench/handler_tiny.c).
BENCH_TINY_AROUND_OURS := $(BENCH_RPATH) -lhandler_tiny1 $(BENCH_OURS_LIBS) \
	$(foreach n,$(filter-out 1,$(BENCH_TINY_NUMBERS)),-lhandler_tiny$(n))

$(BENCH_DIR)/libhandler_m1.so: BENCH_NEXT := -lhandler_m2
$(BENCH_DIR)/libhandler_m1.so: $(BENCH_DIR)/libhandler_m2.so
$(BENCH_DIR)/libhandler_m2.so: BENCH_NEXT := -lhandler_m3
$(BENCH_DIR)/libhandler_m2.so: $(BENCH_DIR)/libhandler_m3.so
$(BENCH_DIR)/libhandler_m3.so: BENCH_NEXT := -lhandler_m4
$(BENCH_DIR)/libhandler_m3.so: $(BENCH_DIR)/libhandler_m4.so
$(BENCH_DIR)/libhandler_m4.so: BENCH_NEXT :=

$(BENCH_DIR)/libhandler_m%.so: bench/handler_module.c bench/handler_page.h bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -DMODULE=$* -Wl,-soname,libhandler_m$*.so $< -o $@ \
		$(BENCH_RPATH) $(BENCH_NEXT)

$(BENCH_DIR)/handler_crash_helper: bench/handler_crash_helper.c bench/handler_page.h bench/timing.h \
		$(BENCH_HANDLER_MODULES) $(SHARED) $(BUILD)/libexecinfo_ex.so
	$(CC) $(BENCH_CFLAGS) $< -o $@ $(BENCH_OURS_LIBS) $(BENCH_RPATH) -lhandler_m1 -lpthread

# 7b and 7c: a program of ten tiny libraries, without our library, linked
# with it, and linked with the static library (for index_statistics).
$(BENCH_DIR)/libhandler_tiny%.so: bench/handler_tiny.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -DTINY=$* -Wl,-soname,libhandler_tiny$*.so $< -o $@

BENCH_LOAD_DEPS := bench/handler_load_helper.c bench/handler_page.h bench/timing.h $(BENCH_TINY)

$(BENCH_DIR)/handler_load_helper_plain: $(BENCH_LOAD_DEPS)
	$(CC) $(BENCH_CFLAGS) -DVARIANT=0 $< -o $@ $(BENCH_TINY_LIBS) -lpthread

$(BENCH_DIR)/handler_load_helper_ours: $(BENCH_LOAD_DEPS) $(SHARED) $(BUILD)/libexecinfo_ex.so
	$(CC) $(BENCH_CFLAGS) -DVARIANT=1 $< -o $@ $(BENCH_TINY_AROUND_OURS) -lpthread

$(BENCH_DIR)/handler_load_helper_static: $(BENCH_LOAD_DEPS) $(STATIC)
	$(CC) $(BENCH_CFLAGS) -DVARIANT=2 $< -o $@ $(STATIC) $(DEP_LIBS) $(BENCH_TINY_LIBS)

# ---- dlopen of many modules (issue 11 item 5) --------------------------------
# build/bench/dlopen_bench runs dlopen_many_helper (which links nothing of
# ours) plain and with the library preloaded: 200 copies of one small
# generated module, real system libraries, and open/close cycles. Set
# BENCH_DLOPEN_BASELINE=/path/libexecinfo_ex.so to add another build.
DLOPEN_BENCH_DEFINES := -DBENCH_DLOPEN_DIR='"$(CURDIR)/$(BENCH_DIR)"' \
	-DBENCH_DLOPEN_LIBRARY='"$(CURDIR)/$(BUILD)/libexecinfo_ex.so"'

$(BENCH_DIR)/dlopen_bench: bench/dlopen_bench.c bench/timing.h bench/bench.mk $(SHARED) $(BUILD)/libexecinfo_ex.so
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(DLOPEN_BENCH_DEFINES) $< -o $@

$(BENCH_DIR)/dlopen_many_helper: bench/dlopen_many_helper.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ -ldl

# One build, 200 copies (module000.so ... module199.so).
$(BENCH_DIR)/many/module199.so: bench/dlopen_module.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared $< -o $(BENCH_DIR)/many/module.so
	for i in $$(seq -w 0 199); do cp $(BENCH_DIR)/many/module.so $(BENCH_DIR)/many/module$$i.so; done

# ---- the heap benchmark (bench/heap) -----------------------------------------
# build/bench/heap/heap_bench runs pool (issue 14's pool workload), churn
# and CPython's dict_of_lists.py as whole processes: plain, under our hooks
# library (heap=0, the defaults, the least recording), glibc's mtrace, our
# mtrace, heaptrack --raw, and ASan builds of pool and churn. Knobs (its
# --help): HEAP_BENCH_REPEATS, HEAP_BENCH_WORKLOADS, HEAP_BENCH_SKIP, sizes,
# HEAP_BENCH_OTHER_HOOKS (the profiler row with another build, same run).
# bench/heap/budget.sh is the per-call budget (callgrind), run by hand. The
# paths it runs are compiled in, absolute, so that it runs from anywhere.
# mtrace traces only after a call to mtrace(), which neither workload makes:
# mtrace_start.so, preloaded after libc_malloc_debug.so.0, makes it.
HEAP_PYTHON       ?= /usr/bin/python3
HEAP_HEAPTRACK    ?= /usr/bin/heaptrack
HEAP_VALGRIND     ?= $(or $(shell command -v valgrind 2>/dev/null),/usr/bin/valgrind)
HEAP_MALLOC_DEBUG ?= $(abspath $(shell $(CC) -print-file-name=libc_malloc_debug.so.0))
HEAP_BENCH_DEFINES := -DHEAP_BENCH_DIR='"$(CURDIR)/$(HEAP_BENCH_DIR)"' \
	-DHEAP_HOOKS_LIBRARY='"$(CURDIR)/$(BUILD)/libexecinfo_ex_hooks.so"' \
	-DHEAP_PYTHON='"$(HEAP_PYTHON)"' -DHEAP_PY_SCRIPT='"$(CURDIR)/bench/heap/dict_of_lists.py"' \
	-DHEAP_MALLOC_DEBUG='"$(HEAP_MALLOC_DEBUG)"' -DHEAP_HEAPTRACK='"$(HEAP_HEAPTRACK)"' \
	-DHEAP_VALGRIND='"$(HEAP_VALGRIND)"'

# bench.mk is a prerequisite: the paths above are in the binary.
$(HEAP_BENCH_DIR)/heap_bench: bench/heap/heap_bench.c bench/timing.h bench/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(HEAP_BENCH_DEFINES) $< -o $@

# The per-call budget (bench/heap/budget.sh): instructions per malloc and
# per free by part, under callgrind; not part of `make bench`.
.PHONY: bench-budget
bench-budget: $(HEAP_BENCH_DIR)/pool $(BUILD)/libexecinfo_ex_hooks.so
	BUILD=$(BUILD) sh bench/heap/budget.sh

# Programs we did not write (bash, make -j2, g++, python's test modules)
# whole under the hooks library (bench/heap/real_programs.py): about 3
# minutes; not part of `make bench`.
.PHONY: bench-real
bench-real: $(BUILD)/libexecinfo_ex_hooks.so
	python3 bench/heap/real_programs.py $(BENCH_REAL_RUNS) $(BUILD)

$(HEAP_BENCH_DIR)/pool: bench/heap/pool.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@

$(HEAP_BENCH_DIR)/pool_asan: bench/heap/pool.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fsanitize=address $< -o $@

$(HEAP_BENCH_DIR)/churn: bench/heap/churn.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@

$(HEAP_BENCH_DIR)/churn_asan: bench/heap/churn.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fsanitize=address $< -o $@

$(HEAP_BENCH_DIR)/mtrace_start.so: bench/heap/mtrace_start.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared $< -o $@

# Issue 15: what the inlined calls cost the index of a main executable,
# inlines=1 against inlines=0 (bench/inline_cost.py; docs/PERFORMANCE.md,
# "Inlined frames"). Run at the end of `make bench`, or alone by
# `make bench-inline`.
# index_cost_helper.c linked with the -O2 test fixture (its main renamed)
# and with a generated C++ program of about 3,300 lines (-O2 -g).
INLINE_GEN_DIR := $(BENCH_DIR)/inline_gen
INLINE_GEN_OBJECTS := $(patsubst %,$(INLINE_GEN_DIR)/gen_%.o,0 1 2 3 entry)

$(INLINE_GEN_DIR)/gen_entry.cpp: bench/gen_inline_cxx.py
	@mkdir -p $(dir $@)
	python3 bench/gen_inline_cxx.py $(INLINE_GEN_DIR) 4 12

$(INLINE_GEN_DIR)/gen_%.cpp: $(INLINE_GEN_DIR)/gen_entry.cpp ;

$(INLINE_GEN_DIR)/gen_%.o: $(INLINE_GEN_DIR)/gen_%.cpp
	$(firstword $(CXX)) -O2 -g -c $< -o $@

$(BENCH_DIR)/inline_cost_fixture: bench/index_cost_helper.c bench/timing.h tests/fixtures/inline_program.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c tests/fixtures/inline_program.c -Dmain=fixture_main -o $@.fixture.o
	$(CC) $(BENCH_CFLAGS) bench/index_cost_helper.c $@.fixture.o -o $@ $(STATIC) $(DEP_LIBS)

$(BENCH_DIR)/inline_cost_cxx: bench/index_cost_helper.c bench/timing.h $(INLINE_GEN_OBJECTS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c bench/index_cost_helper.c -o $@.helper.o
	$(firstword $(CXX)) -O2 -g $@.helper.o $(INLINE_GEN_OBJECTS) -o $@ $(STATIC) $(DEP_LIBS)

INLINE_CLANG_OBJECTS := $(patsubst %,$(INLINE_GEN_DIR)/clang_%.o,0 1 2 3 entry)

$(INLINE_GEN_DIR)/clang_%.o: $(INLINE_GEN_DIR)/gen_%.cpp
	$(INLINE_CLANGXX) -O2 -g -c $< -o $@

$(BENCH_DIR)/inline_cost_cxx_clang: $(BENCH_DIR)/inline_cost_cxx $(INLINE_CLANG_OBJECTS)
	$(INLINE_CLANGXX) -O2 -g $<.helper.o $(INLINE_CLANG_OBJECTS) -o $@ $(STATIC) $(DEP_LIBS)

bench-inline: $(BENCH_DIR)/inline_cost_fixture $(BENCH_DIR)/inline_cost_cxx $(INLINE_CLANG_PROGRAMS)
	python3 bench/inline_cost.py $(BENCH_INLINE_RUNS) $^

# The issue's target is against the index build "today's" when it was
# filed: the same C++ program linked with the static library of commit
# INLINE_BEFORE_COMMIT (built in a temporary git worktree, which needs the
# repository's history), run in the same rotation as the C++ rows.
INLINE_BEFORE_COMMIT := cb43479
INLINE_BEFORE_TREE := $(BENCH_DIR)/before_issue_15
$(BENCH_DIR)/inline_cost_cxx_before: $(BENCH_DIR)/inline_cost_cxx
	rm -rf $(INLINE_BEFORE_TREE) && git worktree prune
	git worktree add --detach $(INLINE_BEFORE_TREE) $(INLINE_BEFORE_COMMIT)
	$(MAKE) -C $(INLINE_BEFORE_TREE) -s build/libexecinfo_ex.a
	$(firstword $(CXX)) -O2 -g $<.helper.o $(INLINE_GEN_OBJECTS) -o $@ \
		$(INLINE_BEFORE_TREE)/build/libexecinfo_ex.a $(DEP_LIBS)
	git worktree remove --force $(INLINE_BEFORE_TREE)

bench-inline-before: $(BENCH_DIR)/inline_cost_cxx $(BENCH_DIR)/inline_cost_cxx_before
	python3 bench/inline_cost.py 21 --before $(BENCH_DIR)/inline_cost_cxx_before $(BENCH_DIR)/inline_cost_cxx
.PHONY: bench-inline bench-inline-before
.PRECIOUS: $(INLINE_GEN_DIR)/gen_%.cpp

# ---- demangled names in the index (issue 15) ------------------------------
# demangle_cost times one module's index build with demangle=0 and =1: this
# program itself (C, the main executable's case), a generated C++ program
# of about 2,600 lines of templates (bench/cxx/gen_templates.py, 60
# namespaces: some 2,000 mangled names) and libstdc++ (a real C++ library,
# its dynamic symbols only). docs/PERFORMANCE.md has the numbers.
DEMANGLE_BENCH_RUN = $(BENCH_DIR)/demangle_cost $(BENCH_DIR)/demangle_cost $(BENCH_DIR)/cxx_templates \
	$$($(CXX) -print-file-name=libstdc++.so.6)

$(BENCH_DIR)/demangle_cost: bench/demangle_cost.c bench/timing.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -Isrc $(DEP_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS)

$(BENCH_DIR)/cxx_templates.cc: bench/cxx/gen_templates.py
	@mkdir -p $(dir $@)
	python3 $< $@ 60

$(BENCH_DIR)/cxx_templates: $(BENCH_DIR)/cxx_templates.cc
	$(CXX) -O2 -g $< -o $@

bench-demangle: $(DEMANGLE_BENCH_PROGRAMS)
	$(DEMANGLE_BENCH_RUN)
.PHONY: bench-demangle

# ---- stopping the other threads (issue 23) -----------------------------------
# How long one thread takes to get every other thread's registers: a signal
# to each thread, whose handler copies its context, against a cloned helper
# that ptraces them (seize and interrupt; and Breakpad's shape, a copy of
# the process attaching one thread at a time), for 1 to 1,000 threads,
# pinned to one CPU and not; then what each does with a thread that blocks
# every signal, epoll_wait, seccomp and a traced process. About 45 s, so
# not part of `make bench`. BENCH_STOP_ARGS: its options (-r, -n, -m, -p, -O).
$(BENCH_DIR)/stop_methods: bench/threads/stop_methods.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ -lpthread

.PHONY: bench-stop-methods
bench-stop-methods: $(BENCH_DIR)/stop_methods
	$(BENCH_DIR)/stop_methods $(BENCH_STOP_ARGS)

# ---- the every-thread report against eu-stack and gdb (issue 23) -------------
# Fault to end of report with 1, 16, 256 and 1,000 threads (threads=1024
# and threads=1; with minidump= when the library knows it), the same
# process dumped on SIGUSR1 (dump_signal=), and eu-stack -p and gdb's
# thread apply all bt on it, pinned to one CPU, interleaved, medians
# (bench/threads/crash_latency.c); then what threads= costs the start-up
# of a process that never crashes (load_cost's "threads" table).
# BENCH_THREADS_ARGS: crash_latency's options (-r, -R, -n, -M DIR, -T);
# BENCH_THREADS_LOAD_RUNS: the start-up table's repetitions (default 11).
$(BENCH_DIR)/crash_latency: bench/threads/crash_latency.c bench/threads/crowd_page.h bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@

$(BENCH_DIR)/crash_latency_helper: bench/threads/crash_latency_helper.c bench/threads/crowd_page.h \
		bench/timing.h $(SHARED) $(BUILD)/libexecinfo_ex.so
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ $(BENCH_OURS_LIBS) -lpthread

.PHONY: bench-threads
bench-threads: $(BENCH_DIR)/crash_latency $(BENCH_DIR)/crash_latency_helper $(BENCH_DIR)/load_cost
	$(BENCH_DIR)/crash_latency $(BENCH_THREADS_ARGS)
	$(BENCH_DIR)/load_cost $(CURDIR)/$(BUILD) $(BENCH_THREADS_LOAD_RUNS) threads

# The leak check's cost (bench/heap/leak_cost.c): the same program linked
# with the hooks library and built with -fsanitize=leak.
$(HEAP_BENCH_DIR)/leak_cost: bench/heap/leak_cost.c bench/timing.h $(BUILD)/libexecinfo_ex_hooks.so
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $< -o $@ -L$(BUILD) -lexecinfo_ex_hooks -ldl -Wl,-rpath,$(CURDIR)/$(BUILD)

$(HEAP_BENCH_DIR)/leak_cost_lsan: bench/heap/leak_cost.c bench/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fsanitize=leak $< -o $@ -ldl

# ---- every benchmark, once, quickly (issue 25) -------------------------------
# A smoke run for CI: each make bench* target builds and runs with
# BENCH_QUICK=1 (few repetitions, short batches, small workloads; see the
# top of this file), so that a benchmark that no longer builds or runs
# fails CI. Nothing it prints is a measurement.
.PHONY: bench-smoke
# bench-inline-before needs the repository's history (a shallow clone
# lacks the commit it builds): said and left out then.
bench-smoke:
	$(MAKE) BENCH_QUICK=1 bench bench-load bench-threads bench-demangle bench-stop-methods \
		bench-inline bench-budget bench-real
	@if git cat-file -e $(INLINE_BEFORE_COMMIT)^{commit} 2>/dev/null; then \
		$(MAKE) BENCH_QUICK=1 bench-inline-before; \
	else echo "bench-smoke: bench-inline-before left out: commit $(INLINE_BEFORE_COMMIT) is not in this clone"; fi
	@echo "bench-smoke: every benchmark built and ran"

# Issue 27: instructions per warm capture and per malloc+free on x86-64
# (callgrind) and aarch64 (qemu-aarch64 -singlestep), docs/PERFORMANCE.md.
.PHONY: bench-arch-counts
bench-arch-counts: all
	sh tools/aarch64_sysroot.sh build-aarch64/sysroot
	$(MAKE) --no-print-directory CROSS_COMPILE=aarch64-linux-gnu- all
	sh bench/arch/count.sh
