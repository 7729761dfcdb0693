# tests/fuzz/fuzz.mk: `make fuzz` builds the libFuzzer targets with clang
# (ASan and UBSan) into build/fuzz/, writes each a small seed corpus, and
# runs each for FUZZ_SECONDS (default 20). A crash stops the run with the
# input saved as build/fuzz/crash-*; make it a regression test. Included
# by the Makefile. The start of issue 6: the options parser, the state
# blob checker and the leak tool's trace line parser.

FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_FLAGS   := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Isrc -Itools/leaks
FUZZ_TARGETS := options state_blob trace_line elf_index

$(FUZZ_DIR)/fuzz_options: tests/fuzz/fuzz_options.c src/base/options.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $^ -o $@

$(FUZZ_DIR)/fuzz_state_blob: tests/fuzz/fuzz_state_blob.c src/hooks/state_blob.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $^ -o $@

$(FUZZ_DIR)/fuzz_trace_line: tests/fuzz/fuzz_trace_line.c tools/leaks/trace_reader.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $^ -o $@

# The builder and the lookup alone, instrumented (not the library's
# constructors, which would index the fuzzer itself).
FUZZ_INDEX_SOURCES := $(addprefix src/symbolize/,module_data.c symbol_table.c line_table.c \
	debug_file.c lookup.c maps_fallback.c module_list.c) $(addprefix src/base/,array_grow.c maps_reader.c)

$(FUZZ_DIR)/fuzz_elf_index: tests/fuzz/fuzz_elf_index.c $(FUZZ_INDEX_SOURCES)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEP_CFLAGS) $^ -o $@ $(DEP_LIBS)

# Seeds: real inputs of each kind.
fuzz-seeds: all $(BUILD)/tests/state_program $(BUILD)/tests/mtrace_program $(BUILD)/tests/fixture_lib.so
	@mkdir -p $(FUZZ_DIR)/seeds/options $(FUZZ_DIR)/seeds/state_blob $(FUZZ_DIR)/seeds/trace_line
	printf 'handler=1:frames=16:guard=16:quarantine=4M:report=/tmp/r' > $(FUZZ_DIR)/seeds/options/1
	printf 'heap=0:mtrace_frames=8:format=json:signals=segv,abrt' > $(FUZZ_DIR)/seeds/options/2
	EXECINFO_EX_OPTIONS= $(BUILD)/tests/state_program save $(FUZZ_DIR)/seeds/state_blob/1
	MALLOC_TRACE=$(FUZZ_DIR)/trace EXECINFO_EX_OPTIONS=mtrace_frames=4 \
		$(BUILD)/tests/mtrace_program leaks > /dev/null
	split -l 1 -d $(FUZZ_DIR)/trace $(FUZZ_DIR)/seeds/trace_line/line_
	printf '@ ./prog:(main+0x1c)[0x4005f4] + 0x1234 0x10' > $(FUZZ_DIR)/seeds/trace_line/glibc
	@mkdir -p $(FUZZ_DIR)/seeds/elf_index
	cp $(BUILD)/tests/fixture_lib.so $(FUZZ_DIR)/seeds/elf_index/fixture_lib.so
	strip -o $(FUZZ_DIR)/seeds/elf_index/stripped.so $(BUILD)/tests/fixture_lib.so

fuzz: fuzz-seeds $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/crash-$$t- $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t \
	    2>&1 | grep -E '^stat::number_of_executed_units|^stat::peak_rss|ERROR|SUMMARY' || true; \
	  ! ls $(FUZZ_DIR)/crash-$$t-* >/dev/null 2>&1; \
	done

.PHONY: fuzz fuzz-seeds
