# Issue 6: the allocation-failure sweep (tests/faults/README.md).
#   make test-faults   builds and runs it; exits non-zero on any failure.
# Each operation's every allocation is failed in turn, each trial in a
# forked child with a time bound; see the sources for what is checked.
FAULTS_BUILD   := $(BUILD)/tests/faults
FAULTS_HEADERS := tests/faults/fault_core.h tests/faults/sweep.h
FAULTS_RPATH   := -Wl,-rpath,$(CURDIR)/$(BUILD)

.PHONY: test-faults

# The core library, static: the sweep reaches the index builder's internals.
$(FAULTS_BUILD)/sweep_core: tests/faults/sweep_core.c $(FAULTS_HEADERS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(STATIC) $(DEP_LIBS) -ldl

# Under the hooks library; it defines glibc's __libc_malloc... itself.
$(FAULTS_BUILD)/sweep_mtrace: tests/faults/sweep_mtrace.c $(FAULTS_HEADERS) $(BUILD)/libexecinfo_ex_hooks.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -fno-builtin $< -o $@ -L$(BUILD) -lexecinfo_ex_hooks -lexecinfo_ex \
		$(FAULTS_RPATH) -ldl -lpthread

# The leak tool, whole, under an LD_PRELOAD shim.
$(FAULTS_BUILD)/fail_alloc.so: tests/faults/fail_alloc.c tests/faults/fault_core.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -fPIC -shared $< -o $@ -ldl

$(FAULTS_BUILD)/sweep_leaks: tests/faults/sweep_leaks.c $(FAULTS_HEADERS) $(BUILD)/libexecinfo_ex.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $< -o $@ -L$(BUILD) -lexecinfo_ex $(FAULTS_RPATH)

FAULTS_PROGRAMS := $(FAULTS_BUILD)/sweep_core $(FAULTS_BUILD)/sweep_mtrace \
	$(FAULTS_BUILD)/sweep_leaks $(FAULTS_BUILD)/fail_alloc.so

test-faults: all $(FAULTS_PROGRAMS) $(BUILD)/tests/fixture_lib.so
	@work=$$(mktemp -d); trap 'rm -rf "$$work"' EXIT; \
	mkdir "$$work/mtrace" "$$work/inputs" "$$work/leaks"; \
	run() { name=$$1; shift; { "$$@"; echo $$? > "$$work/$$name.rc"; } 2>&1 | tee "$$work/$$name.log"; \
	        [ "$$(cat "$$work/$$name.rc")" = 0 ] || failed="$$failed $$name"; }; \
	failed=; \
	run sweep_core env FIXTURE_LIB=$(CURDIR)/$(BUILD)/tests/fixture_lib.so nice $(FAULTS_BUILD)/sweep_core; \
	run sweep_mtrace env EXECINFO_EX_OPTIONS=quarantine=0:mtrace_frames=4 \
	  nice $(FAULTS_BUILD)/sweep_mtrace "$$work/mtrace"; \
	if EXECINFO_EX_OPTIONS=mtrace_frames=8 $(FAULTS_BUILD)/sweep_mtrace --produce "$$work/inputs"; then \
	  run sweep_leaks nice $(FAULTS_BUILD)/sweep_leaks $(CURDIR)/$(BUILD)/bin/execinfo_ex_leaks \
	    $(CURDIR)/$(FAULTS_BUILD)/fail_alloc.so "$$work/inputs" "$$work/leaks"; \
	else failed="$$failed sweep_mtrace--produce"; fi; \
	if [ -z "$$failed" ]; then echo "test-faults: passed"; exit 0; fi; \
	echo "test-faults: FAILED in$$failed; their failing trials again, for a log that keeps only its end:"; \
	for name in $$failed; do [ -f "$$work/$$name.log" ] && \
	  grep -E '\(status 0x|reference run failed|[1-9][0-9]* (wrong|leaks|crashes|hangs|exits)' "$$work/$$name.log" \
	  | sed "s/^/  $$name: /" | head -40; done; \
	exit 1
