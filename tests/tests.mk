# Tests: `make test` builds and runs all of them (unit, checks, integration,
# stress); each Criterion test runs in its own process with a time bound.
#   tests/unit/test_*.c           the public API, linked to the shared library
#   tests/unit/internal_*.c       internal modules, linked to the static library
#   tests/stress/test_*.c         threads and signals for a bounded time
#   tests/tools/*.sh, *.py        symbol and safety checks of the built objects
#   tests/integration/run.sh      install, build programs as a user would, run

TEST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Iinclude -Isrc -Itests $(DEP_CFLAGS) $(shell pkg-config --cflags libunwind)
TEST_LIBS   := -lcriterion -lunwind -ldl -lpthread
API_TESTS      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
INTERNAL_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/internal_*.c))
HOOKS_TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/hooks_*.c))
STRESS_TESTS   := $(patsubst tests/stress/%.c,$(BUILD)/tests/stress_%,$(wildcard tests/stress/test_*.c))
TEST_FIXTURES  := $(BUILD)/tests/fixture_lib.so $(BUILD)/tests/crash_static $(BUILD)/tests/heap_misuse \
	$(BUILD)/tests/mtrace_program $(BUILD)/tests/state_program
CRITERION_RUN  := --jobs 2 --timeout 60

$(BUILD)/tests/fixture_lib.so: tests/fixtures/fixture_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fPIC -shared $< -o $@

$(BUILD)/tests/crash_static: tests/fixtures/crash_static.c all
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Iinclude $< -o $@ -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/tests/heap_misuse: tests/fixtures/heap_misuse.c all
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -Wno-alloc-size-larger-than -fno-builtin -Iinclude $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks \
		-lpthread -Wl,-rpath,$(CURDIR)/$(BUILD)

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

# -rdynamic: so that glibc's backtrace_symbols can name the same frames,
# for the line-for-line comparison; the integration tests build without it.
$(BUILD)/tests/test_%: tests/unit/test_%.c tests/support.h tests/crash_helpers.h all $(TEST_FIXTURES)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -rdynamic $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,-rpath,$(CURDIR)/$(BUILD) $(TEST_LIBS)

$(BUILD)/tests/internal_%: tests/unit/internal_%.c tests/support.h all
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS) $(TEST_LIBS)

# The hook layer's modules, alone (not interposing malloc).
$(BUILD)/tests/hooks_%: tests/unit/hooks_%.c tests/support.h all
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(HOOKS_INTERNAL) $(STATIC) $(DEP_LIBS) $(TEST_LIBS)

$(BUILD)/tests/stress_%: tests/stress/%.c tests/support.h all $(TEST_FIXTURES)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ -L$(BUILD) -lexecinfo_ex \
		-Wl,-rpath,$(CURDIR)/$(BUILD) $(TEST_LIBS)

test: test-checks test-unit test-integration test-stress

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
	sh tests/tools/check_exports.sh $(SHARED) src/exports.map pthread_create
	sh tests/tools/check_exports.sh $(HOOKS_SHARED) src/hooks/exports.map $(HOOKS_REPLACED)
	python3 tests/tools/check_safety.py src/exports.map src/hooks/exports.map
	sh tests/fuzz/check_run_fuzzers.sh

test-integration: all
	sh tests/integration/run.sh
