# Long stress runs (issue 6), outside `make test`: `make stress`.
#   make stress                   the long version: STRESS_SECONDS=30 for the
#                                 timed targets, STRESS_RUNS=100 runs for the
#                                 counted ones (about 90 s here)
#   make stress STRESS_SHORT=1    the CI version: 5 s and 50 runs (about 30 s
#                                 on 2 cores)
#   STRESS_SECONDS=N, STRESS_RUNS=N set either directly (they win over
#   STRESS_SHORT); STRESS_TARGETS="signals fork" runs only those.
# Targets (each prints one figure line; any failure fails the make):
#   signals   signals at random instants into threads inside malloc/free (the
#             hook layer preloaded), dlopen, the index rebuild and the heap
#             registry; every handler's capture and symbolization checked
#   fork      fork in a loop while 8 threads allocate (hooks linked); every
#             child allocates, frees, captures and symbolizes, exits 0
#   crashes   many threads SIGSEGV at once under the fatal handler (text and
#             JSON, with and without the hook layer, to stderr or to a
#             report= file with registers): one complete report, which
#             lists every other crasher, in tid order, those that had
#             faulted with "also crashed" and the crash function first
#   exit      exit() while 32 threads allocate (hooks linked; a quarter of
#             the runs under mtrace()): right status, no output, whole lines
#   scribble  heap headers, guards and the bytes around blocks overwritten
#             with random bytes, then a SIGSEGV: the report ends properly
# Every child has a deadline (the driver kills its process group) and its
# own alarm(). Drivers: tests/stress/stress_run.c; programs: fixtures/.

ifeq ($(STRESS_SHORT),1)
STRESS_SECONDS ?= 5
STRESS_RUNS    ?= 50
else
STRESS_SECONDS ?= 30
STRESS_RUNS    ?= 100
endif
STRESS_TARGETS ?= signals fork crashes exit scribble

STRESS_BUILD    := $(BUILD)/stress
STRESS_HEADERS  := tests/stress/stress_common.h
STRESS_CORE     := -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)
STRESS_HOOKED   := -L$(BUILD) -lexecinfo_ex_hooks -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)
STRESS_CFLAGS   := -std=gnu11 -O1 -g -Wall -Wextra -fno-builtin -Iinclude
# Linked to the core library only (the hook layer is preloaded by the driver).
STRESS_PLAIN_FIXTURES  := signal_storm crash_together
# Linked to the hook layer, as heap_misuse is.
STRESS_HOOKED_FIXTURES := fork_storm exit_storm heap_scribble
STRESS_PROGRAMS := $(STRESS_BUILD)/stress_run \
	$(addprefix $(STRESS_BUILD)/,$(STRESS_PLAIN_FIXTURES) $(STRESS_HOOKED_FIXTURES))

$(addprefix $(STRESS_BUILD)/,$(STRESS_PLAIN_FIXTURES)): $(STRESS_BUILD)/%: \
		tests/stress/fixtures/%.c $(STRESS_HEADERS) all
	@mkdir -p $(dir $@)
	$(CC) $(STRESS_CFLAGS) $< -o $@ $(STRESS_CORE) -ldl -lpthread

$(addprefix $(STRESS_BUILD)/,$(STRESS_HOOKED_FIXTURES)): $(STRESS_BUILD)/%: \
		tests/stress/fixtures/%.c $(STRESS_HEADERS) all
	@mkdir -p $(dir $@)
	$(CC) $(STRESS_CFLAGS) $< -o $@ $(STRESS_HOOKED) -ldl -lpthread

$(STRESS_BUILD)/stress_run: tests/stress/stress_run.c $(STRESS_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra $< -o $@

.PHONY: stress
stress: $(STRESS_PROGRAMS) $(BUILD)/tests/fixture_lib.so
	@STRESS_BIN=$(CURDIR)/$(STRESS_BUILD) EXECINFO_EX_BUILD=$(CURDIR)/$(BUILD) \
	  FIXTURE_LIB=$(CURDIR)/$(BUILD)/tests/fixture_lib.so \
	  $(STRESS_BUILD)/stress_run $(STRESS_SECONDS) $(STRESS_RUNS) $(STRESS_TARGETS)
