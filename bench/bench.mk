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
BENCH_CFLAGS       := -std=gnu11 -O2 -g -Wall -Wextra -Iinclude
BENCH_OURS_LIBS    := -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)
BENCH_UNWIND_FLAGS := -DUNW_LOCAL_ONLY $(shell pkg-config --cflags libunwind)
BENCH_UNWIND_LIBS  := $(shell pkg-config --libs libunwind)
BENCH_HEADERS      := bench/bench.h bench/timing.h include/execinfo_ex.h

BENCH_PARTS   := main glibc spawn capture first_call symbols index_cost
BENCH_OBJECTS := $(BENCH_PARTS:%=$(BENCH_DIR)/obj/%.o)
BENCH_PROGRAMS := $(BENCH_DIR)/bench \
	$(BENCH_DIR)/first_call_helper_ours \
	$(BENCH_DIR)/first_call_helper_glibc \
	$(BENCH_DIR)/first_call_helper_libunwind \
	$(BENCH_DIR)/index_cost_helper

bench: $(BENCH_PROGRAMS)
	$(BENCH_DIR)/bench

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
