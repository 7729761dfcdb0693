# tests/fuzz/fuzz.mk: `make fuzz` builds the libFuzzer targets with clang
# (ASan and UBSan) into build/fuzz/, writes each a small seed corpus, and
# runs each for FUZZ_SECONDS (default 20). A crash, or any fuzzer that
# exits with a status but 0, fails the run, the input saved as
# build/fuzz/crash-*: once fixed, it goes to tests/fuzz/regressions/TARGET/,
# which every run reads first. Included by the Makefile. Targets: the
# options parser, the state blob checker, the leak tool's trace line parser
# and its whole trace path, the symbol index builder (on images in memory
# and on module files), the DWARF line reader and the fatal handler's
# x86-64 instruction walker (docs/RELIABILITY.md).

FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_FLAGS   := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Isrc -Itools/leaks
FUZZ_HEADERS := $(wildcard include/*.h src/*/*.h tools/leaks/*.h)
FUZZ_TARGETS := options state_blob trace_line trace_file elf_index dwarf_lines index_cache instruction

$(FUZZ_DIR)/fuzz_options: tests/fuzz/fuzz_options.c src/base/options.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

$(FUZZ_DIR)/fuzz_instruction: tests/fuzz/fuzz_instruction.c src/fatal/instruction_x86_64.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

$(FUZZ_DIR)/fuzz_state_blob: tests/fuzz/fuzz_state_blob.c src/hooks/state_blob.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

$(FUZZ_DIR)/fuzz_trace_line: tests/fuzz/fuzz_trace_line.c tools/leaks/trace_reader.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

$(FUZZ_DIR)/fuzz_index_cache: tests/fuzz/fuzz_index_cache.c src/symbolize/index_cache.c \
	src/symbolize/index_cache_image.c src/symbolize/index_cache_deferred.c src/symbolize/index_cache_key.c src/symbolize/path_join.c \
	src/symbolize/file_probes.c src/symbolize/file_probes_check.c src/symbolize/debug_roots.c \
	src/symbolize/lookup.c src/symbolize/inline_lookup.c src/symbolize/maps_fallback.c \
	src/base/maps_reader.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEP_CFLAGS) $(filter %.c,$^) -o $@

# The builder and the lookup alone, instrumented (not the library's
# constructors, which would index the fuzzer itself).
FUZZ_INDEX_SOURCES := $(addprefix src/symbolize/,module_data.c answer_filter.c symbol_table.c dynamic_symbols.c line_table.c \
	inline_table.c debug_file.c debug_roots.c path_join.c file_probes.c file_probes_check.c lookup.c inline_lookup.c \
	maps_fallback.c module_list.c build_id_notes.c index_cache_image.c index_cache_deferred.c \
	demangle.c demangled_names.c) \
	$(addprefix src/base/,array_grow.c run_sort.c maps_reader.c)

$(FUZZ_DIR)/fuzz_elf_index: tests/fuzz/fuzz_elf_index.c $(FUZZ_INDEX_SOURCES) $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEP_CFLAGS) $(filter %.c,$^) -o $@ $(DEP_LIBS)

# The leak tool without its main(), and the library's index builder and
# lookup that its symbolizer uses.
FUZZ_LEAKS_SOURCES := $(filter-out tools/leaks/main.c tools/leaks/state_reader.c,$(wildcard tools/leaks/*.c))

$(FUZZ_DIR)/fuzz_trace_file: tests/fuzz/fuzz_trace_file.c $(FUZZ_LEAKS_SOURCES) $(FUZZ_INDEX_SOURCES) $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEP_CFLAGS) $(filter %.c,$^) -o $@ $(DEP_LIBS)

$(FUZZ_DIR)/fuzz_dwarf_lines: tests/fuzz/fuzz_dwarf_lines.c src/symbolize/line_table.c src/symbolize/inline_table.c src/symbolize/answer_filter.c \
	src/base/array_grow.c src/base/run_sort.c $(FUZZ_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEP_CFLAGS) $(filter %.c,$^) -o $@ $(DEP_LIBS)

# Seeds: real inputs of each kind.
fuzz-seeds: all $(BUILD)/tests/state_program $(BUILD)/tests/mtrace_program $(BUILD)/tests/fixture_lib.so \
	$(BUILD)/tests/cxx_throw.so \
	$(BUILD)/tests/cache_probe
	rm -rf $(FUZZ_DIR)/seeds/index_cache && mkdir -p $(FUZZ_DIR)/seeds/index_cache
	chmod 700 $(FUZZ_DIR)/seeds/index_cache
	EXECINFO_EX_OPTIONS=index_cache=$(CURDIR)/$(FUZZ_DIR)/seeds/index_cache:lines=all \
		$(BUILD)/tests/cache_probe > /dev/null
	find $(FUZZ_DIR)/seeds/index_cache -name '*.idx' -size +256k -delete
	@mkdir -p $(FUZZ_DIR)/seeds/options $(FUZZ_DIR)/seeds/state_blob $(FUZZ_DIR)/seeds/trace_line
	@mkdir -p $(FUZZ_DIR)/seeds/instruction
	printf '\110\213\104\217\020' > $(FUZZ_DIR)/seeds/instruction/mov_sib
	printf '\142\361\174\130\130\007' > $(FUZZ_DIR)/seeds/instruction/evex_broadcast
	printf '\304\342\175\030\007' > $(FUZZ_DIR)/seeds/instruction/vex_broadcast
	printf '\146\017\072\026\007\000' > $(FUZZ_DIR)/seeds/instruction/pextrd
	printf 'handler=1:frames=16:guard=16:quarantine=4M:report=/tmp/r' > $(FUZZ_DIR)/seeds/options/1
	printf 'heap=0:mtrace_frames=8:format=json:signals=segv,abrt' > $(FUZZ_DIR)/seeds/options/2
	EXECINFO_EX_OPTIONS= $(BUILD)/tests/state_program save $(FUZZ_DIR)/seeds/state_blob/1
	MALLOC_TRACE=$(FUZZ_DIR)/trace EXECINFO_EX_OPTIONS=mtrace_frames=4 \
		$(BUILD)/tests/mtrace_program leaks > /dev/null
	split -l 1 -d $(FUZZ_DIR)/trace $(FUZZ_DIR)/seeds/trace_line/line_
	printf '@ ./prog:(main+0x1c)[0x4005f4] + 0x1234 0x10' > $(FUZZ_DIR)/seeds/trace_line/glibc
	@mkdir -p $(FUZZ_DIR)/seeds/trace_file
	# libc would be indexed at every run: the small library stands in for it.
	head -c 4096 $(FUZZ_DIR)/trace | sed 's|[^ ]*/libc\.so\.6:|$(CURDIR)/$(BUILD)/tests/fixture_lib.so:|g' \
		> $(FUZZ_DIR)/seeds/trace_file/ours
	printf '= Start\n@ ./prog:(main+0x1c)[0x4005f4] + 0x1234 0x10\n@ ./prog:[0x4005f4] < 0x1234\n@ ./prog:[0x4005f4] > 0x2000 0x20\n- 0x2000\n= End\n' \
		> $(FUZZ_DIR)/seeds/trace_file/glibc
	@mkdir -p $(FUZZ_DIR)/seeds/elf_index $(FUZZ_DIR)/seeds/dwarf_lines $(FUZZ_DIR)/forms
	cp $(BUILD)/tests/fixture_lib.so $(FUZZ_DIR)/seeds/elf_index/fixture_lib.so
	strip -o $(FUZZ_DIR)/seeds/elf_index/stripped.so $(BUILD)/tests/fixture_lib.so
	$(CC) -O1 -g -gz=zlib -fPIC -shared tests/fixtures/fixture_lib.c -o $(FUZZ_DIR)/seeds/elf_index/compressed.so
	objcopy --only-keep-debug $(BUILD)/tests/fixture_lib.so $(FUZZ_DIR)/forms/fixture_lib.debug
	objcopy --strip-debug --add-gnu-debuglink=$(FUZZ_DIR)/forms/fixture_lib.debug \
		$(BUILD)/tests/fixture_lib.so $(FUZZ_DIR)/seeds/elf_index/debuglink.so
	python3 tests/fuzz/no_section_headers.py $(BUILD)/tests/fixture_lib.so $(FUZZ_DIR)/seeds/elf_index/no_sections.so
	# C++ names, and hostile mangled ones (exploding, overlong, malformed)
	cp $(BUILD)/tests/cxx_throw.so $(FUZZ_DIR)/seeds/elf_index/cxx.so
	python3 tests/fuzz/hostile_mangled.py $(FUZZ_DIR)/hostile_mangled.c
	$(CC) -O1 -fPIC -shared $(FUZZ_DIR)/hostile_mangled.c -o $(FUZZ_DIR)/seeds/elf_index/hostile_mangled.so
	# fuzz_elf_index reads each input as a module file too, beside links to
	# the debug files here (by debuglink), and with EXECINFO_EX_DEBUG_ROOT
	# here (by build-id).
	rm -rf $(FUZZ_DIR)/elf_files && mkdir -p $(FUZZ_DIR)/elf_files
	cp $(FUZZ_DIR)/forms/fixture_lib.debug $(FUZZ_DIR)/elf_files/
	id=$$(readelf -n $(BUILD)/tests/fixture_lib.so | awk '/Build ID/ { print $$3 }') && \
	  test -n "$$id" && mkdir -p $(FUZZ_DIR)/elf_files/.build-id/$${id%$${id#??}} && \
	  cp $(FUZZ_DIR)/forms/fixture_lib.debug $(FUZZ_DIR)/elf_files/.build-id/$${id%$${id#??}}/$${id#??}.debug
	for form in "4:-gdwarf-4" "5:-gdwarf-5" "z:-gdwarf-5 -gz=zlib"; do \
	  $(CC) -O1 -g $${form#*:} -c tests/fixtures/fixture_lib.c -o $(FUZZ_DIR)/forms/lines.o && \
	  objcopy --only-keep-debug $(FUZZ_DIR)/forms/lines.o $(FUZZ_DIR)/seeds/dwarf_lines/dwarf$${form%%:*}.o || exit 1; \
	done

FUZZ_ENV := FUZZ_ELF_FILES=$(CURDIR)/$(FUZZ_DIR)/elf_files EXECINFO_EX_DEBUG_ROOT=$(CURDIR)/$(FUZZ_DIR)/elf_files

# fuzz_elf_index must read its inputs as module files too, not only as
# images in memory: on its seeds, the file opening, the build-id check and
# the debug file lookup are reached.
fuzz-elf-paths: fuzz-seeds $(FUZZ_DIR)/fuzz_elf_index
	$(FUZZ_ENV) $(FUZZ_DIR)/fuzz_elf_index -runs=0 -print_coverage=1 $(FUZZ_DIR)/seeds/elf_index \
	  > $(FUZZ_DIR)/elf_index_coverage.txt 2>&1
	@for function in elf_file_open elf_file_build_id debug_file_open demangle_name; do \
	  grep -q "^COVERED_FUNC: .* $$function " $(FUZZ_DIR)/elf_index_coverage.txt || \
	    { echo "fuzz_elf_index never reaches $$function"; exit 1; }; \
	done

# tests/fuzz/run_fuzzers.sh fails the run on any fuzzer's non-zero exit,
# any artifact, or a fuzzer that never said it was done (checked with stub
# fuzzers by tests/fuzz/check_run_fuzzers.sh in make test-checks).
fuzz: fuzz-seeds fuzz-elf-paths $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	$(FUZZ_ENV) sh tests/fuzz/run_fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-seeds fuzz-elf-paths
