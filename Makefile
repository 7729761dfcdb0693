# execinfo_ex: see README.md. Targets: all (default), demo, test, bench,
# install, uninstall, clean; and, for docs/RELIABILITY.md, fuzz,
# test-faults, stress, test-asan, test-valgrind.
# Variables: PREFIX, DESTDIR, LIBDIR, CC, CFLAGS.

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/execinfo_ex

CC      ?= cc
CFLAGS  ?= -O2 -g
# CROSS_COMPILE, ARCH, BUILD (build/, or build-$(ARCH)/ when cross-built),
# PKG_CONFIG, AR and the qemu-prefix target (issue 27).
include cross.mk
PKGS    := libdw libelf

DEP_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
# libiberty (static, -fPIC on Debian) demangles C++ and Rust names when a
# module is indexed (src/symbolize/demangle.c).
DEMANGLE_LIBS := -liberty
DEP_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS)) $(DEMANGLE_LIBS) -lpthread
LIB_CFLAGS := -std=gnu11 -Wall -Wextra -fPIC -fvisibility=hidden -Iinclude $(DEP_CFLAGS) \
	-DEXECINFO_EX_BINDIR='"$(BINDIR)"'

# What differs by architecture, one file each beside the generic code,
# picked by ARCH (cross.mk): the minidump's CPU context, a thread's
# interrupted one, the walk's ucontext and frameless steps, the signal
# frame's layout, the report's registers, the leak check's static TLS and
# red zone.
MINIDUMP_CONTEXT_SOURCE := src/minidump/minidump_context_$(ARCH).c
THREAD_ARCH_SOURCE := src/threads/thread_arch_$(ARCH).c
STACK_WALK_ARCH_SOURCE := src/unwind/stack_walk_$(ARCH).c
SIGNAL_FRAME_ARCH_SOURCE := src/fatal/signal_frame_$(ARCH).c
CRASH_REGISTERS_SOURCE := src/fatal/crash_registers_$(ARCH).c
LEAK_ARCH_SOURCE := src/hooks/leak_arch_$(ARCH).c
# The faulting instruction: its walker, the fault code's direction, the
# hints' operand and canonical addresses.
FAULT_ACCESS_ARCH_SOURCES := src/fatal/instruction_$(ARCH).c src/fatal/fault_access_$(ARCH).c
FAULT_ARCH_SOURCES := $(FAULT_ACCESS_ARCH_SOURCES) src/fatal/fault_hint_$(ARCH).c
# The signal-safe world: objects whose undefined symbols must all be on
# tests/tools/signal_safe_allowlist.txt (checked by make test).
SIGNAL_SAFE_SOURCES := \
	src/base/fd_write.c \
	src/base/signal_consume.c \
	src/base/report_file.c \
	src/base/text_out.c \
	src/base/json_out.c \
	src/base/maps_reader.c \
	src/base/memory_read.c \
	src/unwind/capture.c \
	src/unwind/stack_walk.c \
	$(STACK_WALK_ARCH_SOURCE) \
	src/unwind/dwarf_cfi.c \
	src/unwind/eh_frame_locate.c \
	src/unwind/dwarf_expression.c \
	src/unwind/rule_cache.c \
	src/unwind/walk_memo.c \
	src/unwind/thread_memo.c \
	src/symbolize/index_reader.c \
	src/symbolize/index_cache_image.c \
	src/symbolize/index_cache_deferred.c \
	src/symbolize/index_cache_key.c \
	src/symbolize/index_at_crash.c \
	src/symbolize/line_mode.c \
	src/symbolize/build_id_notes.c \
	src/symbolize/path_join.c \
	src/symbolize/file_probes_check.c \
	src/symbolize/lookup.c \
	src/symbolize/inline_lookup.c \
	src/symbolize/maps_fallback.c \
	src/symbolize/frame_format.c \
	src/symbolize/frame_json.c \
	src/symbolize/resolved_names.c \
	src/symbolize/symtab_names.c \
	src/symbolize/cold_frame_names.c \
	src/symbolize/symbols_fd.c \
	src/base/utc_time.c \
	src/fatal/signal_names.c \
	src/fatal/collect.c \
	$(CRASH_REGISTERS_SOURCE) \
	src/fatal/fault_hint.c \
	src/fatal/fault_access.c \
	src/fatal/fault_access_words.c \
	$(FAULT_ARCH_SOURCES) \
	src/fatal/signal_frame.c \
	$(SIGNAL_FRAME_ARCH_SOURCE) \
	src/fatal/report_text.c \
	src/fatal/report_json.c \
	src/fatal/handler.c \
	src/fatal/handler_config.c \
	src/fatal/saved_action.c \
	src/fatal/report_text_threads.c \
	src/fatal/report_json_threads.c \
	src/fatal/report_destination.c \
	src/fatal/report_deliver.c \
	src/fatal/second_stage.c \
	src/fatal/second_stage_launch.c \
	src/base/path_pattern.c \
	src/threads/thread_words.c \
	src/threads/thread_list.c \
	src/threads/thread_proc.c \
	src/threads/thread_request.c \
	src/threads/thread_emulator.c \
	src/threads/thread_gather.c \
	src/threads/stop_world.c \
	src/fatal/report_minidump.c \
	src/minidump/minidump_writer.c \
	src/minidump/minidump_file.c \
	src/minidump/minidump_maps.c \
	src/minidump/minidump_threads.c \
	src/minidump/minidump_modules.c \
	src/minidump/minidump_file_id.c \
	src/minidump/minidump_system.c \
	src/minidump/minidump_linux.c \
	src/minidump/minidump_memory_info.c \
	src/minidump/minidump_path.c \
	$(MINIDUMP_CONTEXT_SOURCE) \
	$(THREAD_ARCH_SOURCE)
# The hook layer's part of it (in libexecinfo_ex_hooks.so).
HOOKS_SIGNAL_SAFE_SOURCES := \
	src/hooks/block.c \
	src/hooks/block_set.c \
	src/hooks/stack_depot.c \
	src/hooks/stack_counts.c \
	src/hooks/profile_dump_signal.c \
	src/hooks/heap_capture.c \
	src/hooks/heap_inspect.c \
	src/hooks/heap_report.c \
	src/hooks/heap_summary.c \
	src/hooks/guard_fault.c \
	src/hooks/guard_pool_lookup.c \
	src/hooks/segv_owner.c \
	src/hooks/leak_scan.c \
	src/hooks/leak_report.c \
	src/hooks/leak_ignore.c \
	$(LEAK_ARCH_SOURCE)
NORMAL_SOURCES := \
	src/base/environment.c \
	src/fatal/install.c \
	src/fatal/symbolizer_path.c \
	src/fatal/dump.c \
	src/fatal/alternate_stack.c \
	src/base/array_grow.c \
	src/base/run_sort.c \
	src/base/options.c \
	src/symbolize/module_list.c \
	src/symbolize/symbol_table.c \
	src/symbolize/answer_filter.c \
	src/symbolize/dynamic_symbols.c \
	src/symbolize/demangle.c \
	src/symbolize/demangled_names.c \
	src/symbolize/debug_file.c \
	src/symbolize/debug_roots.c \
	src/symbolize/file_probes.c \
	src/symbolize/index_cache.c \
	src/symbolize/line_table.c \
	src/symbolize/inline_table.c \
	src/symbolize/module_data.c \
	src/symbolize/index.c \
	src/symbolize/index_light.c \
	src/symbolize/symbols.c \
	src/symbolize/resolve.c

SOURCES     := $(SIGNAL_SAFE_SOURCES) $(NORMAL_SOURCES)
OBJECTS     := $(SOURCES:%.c=$(BUILD)/obj/%.o)
SAFE_OBJECTS := $(SIGNAL_SAFE_SOURCES:%.c=$(BUILD)/obj/%.o) \
	$(HOOKS_SIGNAL_SAFE_SOURCES:%.c=$(BUILD)/obj/%.o)

SONAME      := libexecinfo_ex.so.$(SOVERSION)
SHARED      := $(BUILD)/libexecinfo_ex.so.$(VERSION)
STATIC      := $(BUILD)/libexecinfo_ex.a

.PHONY: all demo test test-unit test-checks test-integration test-readme test-stress bench install uninstall clean
all: $(SHARED) $(BUILD)/libexecinfo_ex.so $(STATIC) $(BUILD)/libexecinfo_ex_hooks.so \
	$(BUILD)/libexecinfo_ex_hooks_internal.a \
	$(BUILD)/bin/execinfo_ex_run $(BUILD)/bin/execinfo_ex_heap $(BUILD)/bin/execinfo_ex_leaks \
	$(BUILD)/bin/execinfo_ex_symbolize \
	$(BUILD)/execinfo_ex/mtrace_at_load.so

# The signal-safe objects call through GOT entries bound at load (-fno-plt),
# so that the libraries can bind the rest lazily: binding all 106 of the
# core's imports at load was 26 K of the 118 K instructions it added to a
# preloaded /bin/true, 76 K of the hooks library's 231 K (issue 26;
# tests/tools/check_bound_at_load.sh checks it). BIND_NOW=1 links them
# -z now (full RELRO) as before.
$(BUILD)/obj/%.o: %.c $(wildcard include/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) $(if $(filter $@,$(SAFE_OBJECTS)),-fno-plt) -c $< -o $@

comma := ,
BIND_NOW ?=
LIB_BINDING := $(if $(filter 1,$(BIND_NOW)),-Wl$(comma)-z$(comma)now)

# The shared library alone interposes pthread_create (src/fatal/thread_start.c)
# and dlopen, dlmopen, dlclose (src/symbolize/load_watch.c).
# It loads libelf and libdw only when a module must be read
# (src/symbolize/elf_libraries.c); the static library links them.
SHARED_ONLY_OBJECTS := $(BUILD)/obj/src/fatal/thread_start.o $(BUILD)/obj/src/symbolize/load_watch.o \
	$(BUILD)/obj/src/symbolize/elf_libraries.o
STATIC_ONLY_OBJECTS := $(BUILD)/obj/src/fatal/thread_start_static.o

$(BUILD)/obj/src/fatal/thread_start_static.o: src/fatal/thread_start_static.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) -c $< -o $@

# The objects whose code every process runs (the load, the handler's
# install, the heap hooks' path and the walk they take) are linked first,
# so that it lies in few 64 KiB windows: the kernel maps a library's
# pages by the window around each fault in its code (fault-around), and
# what a window maps counts in the process's RSS. Found with callgrind on
# a preloaded /bin/true and a profiled bench/heap/pool (docs/PERFORMANCE.md,
# "Code that runs in every process, first"); the others follow in their
# own order.
LINK_FIRST := $(addprefix $(BUILD)/obj/, \
	src/base/options.o src/base/environment.o src/base/array_grow.o \
	src/fatal/install.o src/fatal/handler_config.o src/fatal/saved_action.o src/fatal/alternate_stack.o \
	src/fatal/collect.o src/fatal/thread_start.o src/fatal/symbolizer_path.o \
	src/fatal/second_stage_launch.o \
	src/symbolize/index.o src/symbolize/index_light.o src/symbolize/index_reader.o \
	src/symbolize/index_cache.o src/symbolize/index_cache_image.o \
	src/symbolize/index_cache_deferred.o src/symbolize/index_cache_key.o \
	src/symbolize/line_mode.o src/symbolize/module_list.o \
	src/symbolize/maps_fallback.o src/symbolize/debug_roots.o src/symbolize/inline_table.o \
	src/unwind/capture.o src/unwind/stack_walk.o $(STACK_WALK_ARCH_SOURCE:%.c=%.o) \
	src/unwind/dwarf_cfi.o src/unwind/rule_cache.o src/unwind/walk_memo.o \
	src/hooks/allocator.o src/hooks/heap_state.o src/hooks/state.o src/hooks/sample.o \
	src/hooks/heap.o src/hooks/block.o src/hooks/block_set.o src/hooks/heap_capture.o \
	src/hooks/thread_capture.o src/hooks/stack_depot.o src/hooks/stack_counts.o \
	src/hooks/heap_profile.o src/hooks/heap_inspect.o src/hooks/quarantine.o \
	src/hooks/segv_owner.o src/hooks/mtrace.o src/hooks/exit_check.o src/hooks/profile_dump.o)
link_order = $(filter $(LINK_FIRST),$(1)) $(filter-out $(LINK_FIRST),$(1))

$(SHARED): $(OBJECTS) $(SHARED_ONLY_OBJECTS) src/exports.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script,src/exports.map \
		$(LIB_BINDING) -Wl,--no-undefined -o $@ $(call link_order,$(OBJECTS) $(SHARED_ONLY_OBJECTS)) $(DEMANGLE_LIBS) \
		-lpthread -ldl

$(BUILD)/libexecinfo_ex.so: $(SHARED)
	ln -sf libexecinfo_ex.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(STATIC): $(OBJECTS) $(STATIC_ONLY_OBJECTS)
	rm -f $@
	$(AR) rcs $@ $(OBJECTS) $(STATIC_ONLY_OBJECTS)

# ---- heap hook layer (src/hooks): libexecinfo_ex_hooks ---------------------
# The shared library links the core one (for backtraces and the fatal
# handler) and has its own copies of the small base modules it needs.
HOOKS_SOURCES  := $(sort $(filter-out src/hooks/leak_arch_%.c,$(wildcard src/hooks/*.c)) \
	$(LEAK_ARCH_SOURCE))
HOOKS_OBJECTS  := $(HOOKS_SOURCES:%.c=$(BUILD)/obj/%.o)
HOOKS_BASE     := $(addprefix $(BUILD)/obj/src/base/,options.o environment.o fd_write.o signal_consume.o text_out.o \
	json_out.o report_file.o maps_reader.o path_pattern.o array_grow.o memory_read.o)
# The fault access's decoding, for the report of a guard page's fault
# (src/hooks/guard_fault.c), which the crash lead writes before the core's
# report has said it.
HOOKS_BASE     += $(addprefix $(BUILD)/obj/,src/fatal/fault_access.o src/fatal/fault_access_words.o \
	$(FAULT_ACCESS_ARCH_SOURCES:%.c=%.o))
# zlib gzips the heap profiles (src/hooks/profile_pprof.c), loaded when the
# first one is written (src/hooks/gzip_library.c), not linked.
HOOKS_LIBS     := -ldl
HOOKS_SONAME   := libexecinfo_ex_hooks.so.$(SOVERSION)
HOOKS_SHARED   := $(BUILD)/libexecinfo_ex_hooks.so.$(VERSION)
# For the unit tests of tests/unit/hooks_*.c: the modules without the
# entry points (allocator.c, dlopen_deepbind.c), so that a test program keeps
# glibc's malloc and dlopen.
HOOKS_INTERNAL := $(BUILD)/libexecinfo_ex_hooks_internal.a
HOOKS_REPLACED := malloc free calloc realloc reallocarray posix_memalign memalign \
	aligned_alloc valloc pvalloc malloc_usable_size mtrace muntrace dlopen dlmopen dlclose \
	sigaction signal
# dlopen: src/hooks/dlopen_deepbind.c, which passes it on to the core's;
# dlmopen, dlclose: passed on to the core's (src/symbolize/load_watch_forward.c).
HOOKS_FORWARD  := $(BUILD)/obj/src/symbolize/load_watch_forward.o

$(HOOKS_SHARED): $(HOOKS_OBJECTS) $(HOOKS_BASE) $(HOOKS_FORWARD) src/hooks/exports.map $(BUILD)/libexecinfo_ex.so
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(HOOKS_SONAME) -Wl,--version-script,src/hooks/exports.map \
		$(LIB_BINDING) -Wl,--no-undefined -o $@ $(call link_order,$(HOOKS_OBJECTS) $(HOOKS_BASE) $(HOOKS_FORWARD)) \
		-L$(BUILD) -lexecinfo_ex -Wl,-rpath,'$$ORIGIN' $(HOOKS_LIBS) -ldl -lpthread

$(BUILD)/libexecinfo_ex_hooks.so: $(HOOKS_SHARED)
	ln -sf libexecinfo_ex_hooks.so.$(VERSION) $(BUILD)/$(HOOKS_SONAME)
	ln -sf $(HOOKS_SONAME) $@

$(HOOKS_INTERNAL): $(filter-out $(BUILD)/obj/src/hooks/allocator.o $(BUILD)/obj/src/hooks/dlopen_deepbind.o $(BUILD)/obj/src/hooks/segv_owner.o,$(HOOKS_OBJECTS))
	rm -f $@
	$(AR) rcs $@ $^

# Written at install time, so that it names the PREFIX of that install.
PC_SUBSTITUTE := sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'

# ---- tools ---------------------------------------------------------------------
# execinfo_ex_run (fatal handler) and execinfo_ex_heap (heap layer) share
# tools/launch.c and check their options with the library's own parser
# (options.o needs only libc). The library paths are compiled in: install
# compiles them again, with the LIBDIR of that install.
LAUNCH_SOURCES := tools/launch.c $(BUILD)/obj/src/base/options.o
LAUNCH_CC = $(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Isrc -Itools \
	-DEXECINFO_EX_LIBRARY_PATH='"$(LIBDIR)/$(SONAME)"' \
	-DEXECINFO_EX_HOOKS_LIBRARY_PATH='"$(LIBDIR)/$(HOOKS_SONAME)"' \
	-DEXECINFO_EX_MTRACE_AT_LOAD_PATH='"$(LIBDIR)/execinfo_ex/mtrace_at_load.so"'
# The build tree's tools: paths relative to their own directory ($(BUILD)/bin,
# tools/launch.c resolves them by /proc/self/exe), so that they run the
# build's libraries before any install.
LAUNCH_BUILD_CC = $(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Isrc -Itools \
	-DEXECINFO_EX_LIBRARY_PATH='"../$(SONAME)"' \
	-DEXECINFO_EX_HOOKS_LIBRARY_PATH='"../$(HOOKS_SONAME)"' \
	-DEXECINFO_EX_MTRACE_AT_LOAD_PATH='"../execinfo_ex/mtrace_at_load.so"'
# execinfo_ex_heap --leaks preloads it after the hooks library, which it
# needs (found by its rpath, one directory up): it starts mtrace() at load.
MTRACE_AT_LOAD := $(BUILD)/execinfo_ex/mtrace_at_load.so
$(MTRACE_AT_LOAD): tools/mtrace_at_load.c $(BUILD)/libexecinfo_ex_hooks.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -fPIC -shared -Wl,--no-undefined $< -o $@ \
		-L$(BUILD) -lexecinfo_ex_hooks -Wl,-rpath,'$$ORIGIN/..'

$(BUILD)/bin/execinfo_ex_%: tools/execinfo_ex_%.c tools/launch.h $(LAUNCH_SOURCES) Makefile
	@mkdir -p $(dir $@)
	$(LAUNCH_BUILD_CC) $< $(LAUNCH_SOURCES) -o $@

# ---- the leak report tool ----------------------------------------------------
# tools/leaks/: reads an mtrace file, symbolizes with the static library's
# own index builder and lookup (src/symbolize/module_data.h, lookup.h).
LEAKS_SOURCES := $(sort $(wildcard tools/leaks/*.c))
LEAKS_OBJECTS := $(LEAKS_SOURCES:%.c=$(BUILD)/obj/%.o)

$(BUILD)/obj/tools/leaks/%.o: tools/leaks/%.c $(wildcard tools/leaks/*.h src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Isrc $(DEP_CFLAGS) \
		-DEXECINFO_EX_VERSION='"$(VERSION)"' -c $< -o $@

# With the hooks library's blob checker (src/hooks/state_blob.c) for saved
# malloc_get_state() blobs.
# With the hooks library's profile writers (pprof, folded; the same
# formats as profile=).
LEAKS_HOOKS_OBJECTS := $(addprefix $(BUILD)/obj/src/hooks/,state_blob.o profile_values.o \
	profile_pprof.o profile_folded.o gzip_library.o)
$(BUILD)/bin/execinfo_ex_leaks: $(LEAKS_OBJECTS) $(LEAKS_HOOKS_OBJECTS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(LEAKS_OBJECTS) $(LEAKS_HOOKS_OBJECTS) $(STATIC) $(DEP_LIBS) $(HOOKS_LIBS)

# ---- the second stage -------------------------------------------------------
# tools/symbolize/: started by the crash handler for the frames the index
# cannot name or line (src/fatal/second_stage.c); the static library's own
# index builder and lookup, as the leak report tool.
SYMBOLIZE_SOURCES := $(sort $(wildcard tools/symbolize/*.c))
SYMBOLIZE_OBJECTS := $(SYMBOLIZE_SOURCES:%.c=$(BUILD)/obj/%.o)

$(BUILD)/obj/tools/symbolize/%.o: tools/symbolize/%.c $(wildcard tools/symbolize/*.h src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Isrc $(DEP_CFLAGS) -c $< -o $@

# Linked static where the toolchain has the archives (libdw.a, libelf.a,
# libc.a...): the process starts without the loader mapping and
# relocating six libraries, which was most of its time in a cold crash
# (docs/PERFORMANCE.md, "The crash, cold"; DECISIONS.md). Else dynamic.
SYMBOLIZE_STATIC_LIBS := -static $(shell $(PKG_CONFIG) --static --libs $(PKGS)) $(DEMANGLE_LIBS) -lpthread

$(BUILD)/bin/execinfo_ex_symbolize: $(SYMBOLIZE_OBJECTS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SYMBOLIZE_OBJECTS) $(STATIC) $(SYMBOLIZE_STATIC_LIBS) 2>/dev/null || \
	$(CC) $(CFLAGS) -o $@ $(SYMBOLIZE_OBJECTS) $(STATIC) $(DEP_LIBS)

# ---- examples and demo ------------------------------------------------------
EXAMPLE_CFLAGS := -std=gnu11 -O0 -g -Wall -Iinclude
EXAMPLE_LIBS   := -L$(BUILD) -lexecinfo_ex -Wl,-rpath,$(CURDIR)/$(BUILD)

$(BUILD)/examples/%: examples/%.c all
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) $< -o $@ $(EXAMPLE_LIBS)

demo: $(BUILD)/examples/print_trace $(BUILD)/examples/crash_handler
	@echo "== examples/print_trace.c: the glibc manual's example, on execinfo_ex"
	$(BUILD)/examples/print_trace
	@echo "== examples/crash_handler.c: a user's SIGSEGV handler"
	$(BUILD)/examples/crash_handler; status=$$?; \
	  echo "(crash_handler exited with status $$status, as a SIGSEGV death: 139)"

# ---- tests --------------------------------------------------------------------
include tests/tests.mk
include tests/aarch64.mk

# ---- benchmarks ---------------------------------------------------------------
include bench/bench.mk
include tests/fuzz/fuzz.mk
# Issue 6: the allocation-failure sweep, the long stress runs, the
# sanitizer and Valgrind runs of the tests.
-include tests/faults/faults.mk
-include tests/stress/stress.mk
-include tests/sanitize/sanitize.mk

# ---- install ------------------------------------------------------------------
MAN3 := $(wildcard man/man3/*.3)
MAN1 := $(wildcard man/man1/*.1)

# ld.so finds a bare library name (LD_PRELOAD=libexecinfo_ex_hooks.so, a
# program linked without an rpath) only through its cache: an install to
# the real root (no DESTDIR) into a directory ldconfig scans refreshes the
# cache, and so does uninstall. Elsewhere, install says what to do instead.
# Issue 13; the tests replace LDCONFIG.
LDCONFIG ?= /sbin/ldconfig
LOADER_NOTE = note: $(LIBDIR) is not in the loader's path: build programs with \
	-Wl,-rpath,$(LIBDIR) (or run them with LD_LIBRARY_PATH=$(LIBDIR)) and preload \
	$(LIBDIR)/libexecinfo_ex_hooks.so by its full path, or use execinfo_ex_heap (README.md)
# refresh_loader_cache WHAT-ELSE: the recipe line; WHAT-ELSE runs when
# LIBDIR is not scanned.
refresh_loader_cache = @if [ -n "$(DESTDIR)" ]; then :; \
	elif sh tools/loader_knows.sh '$(LIBDIR)' '$(LDCONFIG)'; then \
	  echo '$(LDCONFIG)'; $(LDCONFIG) || echo 'warning: $(LDCONFIG) failed: run it as root'; \
	else $(1); fi

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(DOCDIR)/examples
	$(LAUNCH_CC) tools/execinfo_ex_run.c $(LAUNCH_SOURCES) -o $(DESTDIR)$(BINDIR)/execinfo_ex_run
	$(LAUNCH_CC) tools/execinfo_ex_heap.c $(LAUNCH_SOURCES) -o $(DESTDIR)$(BINDIR)/execinfo_ex_heap
	install -m 755 $(BUILD)/bin/execinfo_ex_leaks $(DESTDIR)$(BINDIR)/
	install -m 755 $(BUILD)/bin/execinfo_ex_symbolize $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 include/execinfo_ex.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libexecinfo_ex.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libexecinfo_ex.so
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(HOOKS_SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libexecinfo_ex_hooks.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(HOOKS_SONAME)
	ln -sf $(HOOKS_SONAME) $(DESTDIR)$(LIBDIR)/libexecinfo_ex_hooks.so
	install -d $(DESTDIR)$(LIBDIR)/execinfo_ex
	install -m 755 $(MTRACE_AT_LOAD) $(DESTDIR)$(LIBDIR)/execinfo_ex/
	$(PC_SUBSTITUTE) execinfo_ex.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex.pc
	$(PC_SUBSTITUTE) execinfo_ex_hooks.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_hooks.pc
	$(PC_SUBSTITUTE) execinfo_ex_static.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_static.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex.pc \
		$(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_hooks.pc \
		$(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_static.pc
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	install -m 644 examples/*.c $(DESTDIR)$(DOCDIR)/examples/
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	$(call refresh_loader_cache,echo "$(LOADER_NOTE)")

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/execinfo_ex.h \
	      $(DESTDIR)$(LIBDIR)/libexecinfo_ex.so* $(DESTDIR)$(LIBDIR)/libexecinfo_ex.a \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex.pc \
	      $(DESTDIR)$(LIBDIR)/libexecinfo_ex_hooks.so* $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_hooks.pc \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/execinfo_ex_static.pc
	rm -rf $(DESTDIR)$(LIBDIR)/execinfo_ex
	rm -f $(patsubst man/man3/%,$(DESTDIR)$(MANDIR)/man3/%,$(MAN3))
	rm -f $(patsubst man/man1/%,$(DESTDIR)$(MANDIR)/man1/%,$(MAN1)) $(DESTDIR)$(BINDIR)/execinfo_ex_run \
	      $(DESTDIR)$(BINDIR)/execinfo_ex_heap $(DESTDIR)$(BINDIR)/execinfo_ex_leaks \
	      $(DESTDIR)$(BINDIR)/execinfo_ex_symbolize
	rm -rf $(DESTDIR)$(DOCDIR)
	$(call refresh_loader_cache,:)

clean:
	rm -rf $(BUILD)
